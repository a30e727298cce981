import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageLimitParameter } from '#shared/http/parameters.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import {
  createEndpointManagement,
  type EndpointFunctionDependencies,
} from '#shared/webhooks/endpoint-functions.ts';
import { endpointIdOf } from '#shared/webhooks/endpoint-id.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';

/** The composition root of `GET /api/wallet/webhooks/{webhookId}/deliveries`. */
export function createListWebhookDeliveriesHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler({
    operationId: 'listWebhookDeliveries',
    run: async ({ principal, pathParameters, query }) => {
      const page = await endpoints.deliveries(principal.sub, endpointIdOf(pathParameters), {
        limit: pageLimitParameter(query.limit),
        cursor: query.cursor,
      });
      return { statusCode: 200, body: page };
    },
  });
}

/** `GET /api/wallet/webhooks/{webhookId}/deliveries`: the endpoint's delivery attempts, newest first, a page at a time. */
export const handler = createListWebhookDeliveriesHandler({
  store: createWebhookEndpointStore({
    client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
    tableName: requireEnv(tables.webhooks.envVar),
  }),
  mode: destinationModeFromEnv(),
});
