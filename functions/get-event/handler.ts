import { createEventsApi, type EventFunctionDependencies } from '#functions/list-events/events-api.ts';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { eventJson } from '#shared/webhooks/events/event-json.ts';

/** The composition root of `GET /api/wallet/events/{eventId}`. */
export function createGetEventHandler(deps: EventFunctionDependencies) {
  const events = createEventsApi(deps);
  return httpHandler({
    operationId: 'getEvent',
    run: async ({ principal, pathParameters }) => {
      const event = await events.get(principal.sub, pathParameters.eventId ?? '');
      return { statusCode: 200, body: eventJson(event) };
    },
  });
}

/** `GET /api/wallet/events/{eventId}`: one event of the caller's wallet. */
export const handler = createGetEventHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.webhooks.envVar),
});
