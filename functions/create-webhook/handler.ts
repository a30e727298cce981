import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { WebhookEndpointRegisteredError } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { idempotencyKeyOf } from '#shared/http/idempotency-key.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { validateWebhookEndpointCreate } from '#shared/schemas/validators.generated.js';
import type { WebhookEndpointCreate } from '#shared/schemas/webhooks.ts';
import { idempotencyTtlFromEnv } from '#shared/wallet/model/settings.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import {
  createEndpointManagement,
  type EndpointFunctionDependencies,
  endpointWithSecretJson,
} from '#shared/webhooks/endpoint-functions.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';
import { secretSealerFromEnv } from '#shared/webhooks/secrets/keeper.ts';

/** Relative to the request's own URL, so it is right under a stage path or a custom domain. */
const locationOf = (endpointId: string) => `webhooks/${endpointId}`;

/** The composition root of `POST /api/wallet/webhooks`. */
export function createCreateWebhookHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler<WebhookEndpointCreate>({
    operationId: 'createWebhook',
    body: validateWebhookEndpointCreate,
    run: async (request) => {
      const { principal, body } = request;
      const command = {
        address: principal.sub,
        url: body.url,
        eventTypes: body.eventTypes,
        description: body.description,
      };
      // Every line of the header: a repeated one is refused, not decided by which came last.
      const key = idempotencyKeyOf(request.headerValues('idempotency-key'));
      const created =
        key === undefined ? await endpoints.create(command) : await endpoints.createWithKey(command, key);
      if ('registeredBefore' in created) {
        const { endpointId, exists } = created.registeredBefore;
        throw new WebhookEndpointRegisteredError(endpointId, exists ? locationOf(endpointId) : undefined);
      }
      return {
        statusCode: 201,
        body: endpointWithSecretJson(created),
        headers: { location: locationOf(created.endpoint.id) },
      };
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
  keyTtlSeconds: idempotencyTtlFromEnv(),
});
