import {
  createEventsApi,
  type EventFunctionDependencies,
  eventTypeOf,
} from '#functions/list-events/events-api.ts';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageLimitParameter } from '#shared/http/parameters.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { eventJson } from '#shared/webhooks/events/event-json.ts';

/** The composition root of `GET /api/wallet/events`. */
export function createListEventsHandler(deps: EventFunctionDependencies) {
  const events = createEventsApi(deps);
  return httpHandler({
    operationId: 'listEvents',
    run: async ({ principal, query }) => {
      const page = await events.list(principal.sub, {
        limit: pageLimitParameter(query.limit),
        type: eventTypeOf(query.type),
        cursor: query.cursor,
      });
      const body = {
        items: page.items.map(eventJson),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
      return { statusCode: 200, body };
    },
  });
}

/** `GET /api/wallet/events`: the caller's events of the last 30 days, newest first. */
export const handler = createListEventsHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.webhooks.envVar),
});
