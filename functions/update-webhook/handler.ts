import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { validateWebhookEndpointPatch } from '#shared/schemas/validators.generated.js';
import type { WebhookEndpointPatch } from '#shared/schemas/webhooks.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import {
  createEndpointManagement,
  type EndpointFunctionDependencies,
  endpointJson,
} from '#shared/webhooks/endpoint-functions.ts';
import { endpointIdOf } from '#shared/webhooks/endpoint-id.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';

/** The composition root of `PATCH /api/wallet/webhooks/{webhookId}`. */
export function createUpdateWebhookHandler(deps: EndpointFunctionDependencies) {
  const endpoints = createEndpointManagement(deps);
  return httpHandler<WebhookEndpointPatch>({
    operationId: 'updateWebhook',
    body: validateWebhookEndpointPatch,
    run: async ({ principal, pathParameters, body }) => {
      const endpoint = await endpoints.update(principal.sub, endpointIdOf(pathParameters), {
        ...(body.url === undefined ? {} : { url: body.url }),
        ...(body.eventTypes === undefined ? {} : { eventTypes: body.eventTypes }),
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.status === undefined ? {} : { status: body.status }),
      });
      return { statusCode: 200, body: endpointJson(endpoint) };
    },
  });
}

/** `PATCH /api/wallet/webhooks/{webhookId}`: a JSON Merge Patch (RFC 7396) of one endpoint of the caller. */
export const handler = createUpdateWebhookHandler({
  store: createWebhookEndpointStore({
    client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
    tableName: requireEnv(tables.webhooks.envVar),
  }),
  mode: destinationModeFromEnv(),
});
