import { createEventsApi, type EventFunctionDependencies } from '#functions/list-events/events-api.ts';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import type { WebhookRedeliverRequest } from '#shared/schemas/events.ts';
import { validateWebhookRedeliverRequest } from '#shared/schemas/validators.generated.js';

/** The composition root of `POST /api/wallet/events/{eventId}/redeliver`. */
export function createRedeliverEventHandler(deps: EventFunctionDependencies) {
  const events = createEventsApi(deps);
  return httpHandler<WebhookRedeliverRequest>({
    operationId: 'redeliverEvent',
    body: validateWebhookRedeliverRequest,
    run: async ({ principal, pathParameters, body }) => {
      await events.redeliver(principal.sub, pathParameters.eventId ?? '', body.webhookId);
      return { statusCode: 202, body: { eventId: pathParameters.eventId, webhookId: body.webhookId } };
    },
  });
}

/** `POST /api/wallet/events/{eventId}/redeliver`: one event to one endpoint of the wallet again. */
export const handler = createRedeliverEventHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.webhooks.envVar),
});
