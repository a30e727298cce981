import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { validateWebhookEndpointCreate } from '#shared/schemas/validators.generated.js';
import type { WebhookEndpointCreate } from '#shared/schemas/webhooks.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import {
  createEndpointManagement,
  type EndpointFunctionDependencies,
  endpointWithSecretJson,
} from '#shared/webhooks/endpoint-functions.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';
import { secretSealerFromEnv } from '#shared/webhooks/secrets/keeper.ts';

/** The composition root of `POST /api/wallet/webhooks`. */
export function createCreateWebhookHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler<WebhookEndpointCreate>({
    operationId: 'createWebhook',
    body: validateWebhookEndpointCreate,
    run: async ({ principal, body }) => {
      const created = await endpoints.create({
        address: principal.sub,
        url: body.url,
        eventTypes: body.eventTypes,
        description: body.description,
      });
      // Relative to the request's own URL, so it is right under a stage path or a custom domain.
      const location = `webhooks/${created.endpoint.id}`;
      return { statusCode: 201, body: endpointWithSecretJson(created), headers: { location } };
    },
  });
}

/** `POST /api/wallet/webhooks`: registers an endpoint of the caller's wallet; the answer alone shows its secret. */
export const handler = createCreateWebhookHandler({
  store: createWebhookEndpointStore({
    client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
    tableName: requireEnv(tables.webhooks.envVar),
  }),
  mode: destinationModeFromEnv(),
  sealer: secretSealerFromEnv(),
});
