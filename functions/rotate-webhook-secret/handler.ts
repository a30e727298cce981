import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import {
  createEndpointManagement,
  type EndpointFunctionDependencies,
  endpointWithSecretJson,
} from '#shared/webhooks/endpoint-functions.ts';
import { endpointIdOf } from '#shared/webhooks/endpoint-id.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';
import { secretSealerFromEnv } from '#shared/webhooks/secrets/keeper.ts';

/** The composition root of `POST /api/wallet/webhooks/{webhookId}/rotate-secret`. */
export function createRotateWebhookSecretHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler({
    operationId: 'rotateWebhookSecret',
    run: async ({ principal, pathParameters }) => {
      const rotated = await endpoints.rotateSecret(principal.sub, endpointIdOf(pathParameters));
      return { statusCode: 200, body: endpointWithSecretJson(rotated) };
    },
  });
}

/** `POST /api/wallet/webhooks/{webhookId}/rotate-secret`: a new secret; the previous one signs beside it for 24 h. */
export const handler = createRotateWebhookSecretHandler({
  store: createWebhookEndpointStore({
    client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
    tableName: requireEnv(tables.webhooks.envVar),
  }),
  mode: destinationModeFromEnv(),
  sealer: secretSealerFromEnv(),
});
