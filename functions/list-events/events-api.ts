/**
 * What the events functions (list-events, get-event, replay-webhook, redeliver-event) share: the
 * events API wired on the webhooks table's adapters, and the query parameters they read. Here, not
 * in shared/: wiring adapters is a composition root's job. Each handler.ts calls it with its own client.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { InvalidParameterError } from '#shared/errors.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { createEventStore } from '#shared/webhooks/dynamodb/event-store.ts';
import { createEndpointLookup } from '#shared/webhooks/dynamodb/subscribers.ts';
import { createTaskStore } from '#shared/webhooks/dynamodb/task-store.ts';
import { makeEventsApi } from '#shared/webhooks/events/events-api.ts';
import {
  isWebhookEventType,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '#shared/webhooks/model/event-types.ts';

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

const DEFAULT_LIMIT = 20;

/** `limit` as sent: 1 to 100, written as a plain integer. */
export function limitOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,3}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= 100))
    throw new InvalidParameterError('limit must be an integer from 1 to 100');
  return limit;
}

/** `type` as sent: one of the known event types. */
export function eventTypeOf(text: string | undefined): WebhookEventType | undefined {
  if (text === undefined) return undefined;
  if (!isWebhookEventType(text)) {
    throw new InvalidParameterError(`type must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  }
  return text;
}
