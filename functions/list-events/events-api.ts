/**
 * What the events functions (list-events, get-event, replay-webhook, redeliver-event) share: the
 * events API wired on the webhooks table's adapters, and the query parameters they read. Here, not
 * in shared/: wiring adapters is a composition root's job. Each handler.ts calls it with its own client.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { enumParameter } from '#shared/http/parameters.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { createEventStore } from '#shared/webhooks/dynamodb/event-store.ts';
import { createEndpointLookup } from '#shared/webhooks/dynamodb/subscribers.ts';
import { createTaskStore } from '#shared/webhooks/dynamodb/task-store.ts';
import { makeEventsApi } from '#shared/webhooks/events/events-api.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '#shared/webhooks/model/event-types.ts';

export interface EventFunctionDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

export function createEventsApi({ client, tableName }: EventFunctionDependencies) {
  const access = { client, tableName };
  return makeEventsApi({
    events: createEventStore(access),
    endpoints: createEndpointLookup(access),
    replays: createTaskStore(access),
    clock: systemClock,
  });
}

/** `type` as sent: one of the known event types. */
export const eventTypeOf = (text: string | undefined): WebhookEventType | undefined =>
  text === undefined ? undefined : enumParameter('type', text, WEBHOOK_EVENT_TYPES);
