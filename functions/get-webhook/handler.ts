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
import { endpointIdOf } from '#shared/webhooks/endpoint-id.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';

/** The composition root of `GET /api/wallet/webhooks/{webhookId}`. */
export function createGetWebhookHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler({
    operationId: 'getWebhook',
    run: async ({ principal, pathParameters }) => {
      const endpoint = await endpoints.get(principal.sub, endpointIdOf(pathParameters));
      return { statusCode: 200, body: endpointJson(endpoint) };
    },
  });
}

/** `GET /api/wallet/webhooks/{webhookId}`: one endpoint of the caller (404 for anyone else's). */
export const handler = createGetWebhookHandler({
  store: createWebhookEndpointStore({
    client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
    tableName: requireEnv(tables.webhooks.envVar),
  }),
  mode: destinationModeFromEnv(),
});
