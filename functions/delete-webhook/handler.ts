import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import {
  createEndpointManagement,
  type EndpointFunctionDependencies,
} from '#shared/webhooks/endpoint-functions.ts';
import { endpointIdOf } from '#shared/webhooks/endpoint-id.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';

/** The composition root of `DELETE /api/wallet/webhooks/{webhookId}`. */
export function createDeleteWebhookHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler({
    operationId: 'deleteWebhook',
    run: async ({ principal, pathParameters }) => {
      await endpoints.remove(principal.sub, endpointIdOf(pathParameters));
      return { statusCode: 204, body: undefined };
    },
  });
}

/** `DELETE /api/wallet/webhooks/{webhookId}`: removes one endpoint of the caller; its secrets go with it. */
export const handler = createDeleteWebhookHandler({
  store: createWebhookEndpointStore({
    client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
    tableName: requireEnv(tables.webhooks.envVar),
  }),
  mode: destinationModeFromEnv(),
});
