import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import {
  createEndpointManagement,
  type EndpointFunctionDependencies,
  endpointJson,
} from '#shared/webhooks/endpoint-functions.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';

/** The composition root of `GET /api/wallet/webhooks`. */
export function createListWebhooksHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler({
    operationId: 'listWebhooks',
    run: async ({ principal }) => {
      const items = await endpoints.list(principal.sub);
      return { statusCode: 200, body: { items: items.map(endpointJson) } };
    },
  });
}

/** `GET /api/wallet/webhooks`: the caller's endpoints, newest first, without their secrets. */
export const handler = createListWebhooksHandler({
  store: createWebhookEndpointStore({
    client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
    tableName: requireEnv(tables.webhooks.envVar),
  }),
  mode: destinationModeFromEnv(),
});
