import { createEventsApi, type EventFunctionDependencies } from '#functions/list-events/events-api.ts';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import type { WebhookReplayRequest } from '#shared/schemas/events.ts';
import { validateWebhookReplayRequest } from '#shared/schemas/validators.generated.js';
import { endpointIdOf } from '#shared/webhooks/endpoint-id.ts';

/** The composition root of `POST /api/wallet/webhooks/{webhookId}/replay`. */
export function createReplayWebhookHandler(deps: EventFunctionDependencies) {
  const events = createEventsApi(deps);
  return httpHandler<WebhookReplayRequest>({
    operationId: 'replayWebhook',
    body: validateWebhookReplayRequest,
    run: async ({ principal, pathParameters, body }) => {
      const replay = await events.replay(principal.sub, endpointIdOf(pathParameters), body.since);
      return { statusCode: 202, body: replay };
    },
  });
}

/** `POST /api/wallet/webhooks/{webhookId}/replay`: the wallet's events since a time, to the endpoint again. */
export const handler = createReplayWebhookHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.webhooks.envVar),
});
