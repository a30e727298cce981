/**
 * The events of the webhooks table: stored once by the deriver with their delivery tasks, read by
 * the events API, replays and the dispatcher. Layout in ./event-keys.ts.
 */

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type RetryPolicy, withRetries } from '../../dynamodb/retry.ts';
import { InvalidParameterError } from '../../errors.ts';
import { decodeJsonCursor, encodeJsonCursor } from '../../util/json-cursor.ts';
import type { EventPage, EventReader, EventStore } from '../events/ports.ts';
import { isWebhookEventType } from '../model/event-types.ts';
import { EVENT_RETENTION_MS, type WebhookEvent } from '../model/webhook-event.ts';
import { dueShardOf, EVENTS_INDEX, eventKey, expiresAfter, LIVE_ORIGIN, taskKey } from './event-keys.ts';

/**
 * Off the request path (the deriver, the dispatcher): more patient than a request's three tries,
 * as a stream batch or a poll handed back costs more than waiting a second.
 */
export const BACKGROUND_RETRIES: RetryPolicy = { attempts: 6, baseDelayMs: 50, maxDelayMs: 1_000 };

/** The webhooks table: a DocumentClient and its physical name. */
export interface EventTableAccess {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** The longest cursor accepted: what this store writes is well under it. */
export const MAX_CURSOR_LENGTH = 400;

/** A cursor that is not one this store gave for this wallet: a 400. */
export class InvalidEventCursorError extends InvalidParameterError {
  constructor() {
    super('cursor is not a cursor of your events: start again without one');
  }
}

const encodeCursor = (address: string, key: string) => encodeJsonCursor([address, key]);

function decodeCursor(address: string, cursor: string): string {
  const decoded = decodeJsonCursor(cursor, { maxLength: MAX_CURSOR_LENGTH, length: 2 });
  const [owner, key] = decoded ?? [];
  if (owner !== address || typeof key !== 'string' || !/#evt_[A-Za-z0-9_-]{22}$/.test(key)) {
    throw new InvalidEventCursorError();
  }
  return key;
}

/** An event as its item stores it; `undefined` for an item that is not one. */
export function eventOfItem(item: Record<string, unknown> | undefined): WebhookEvent | undefined {
  if (item?.kind !== 'event' || typeof item.type !== 'string' || !isWebhookEventType(item.type)) {
    return undefined;
  }
  return {
    id: String(item.eventId),
    type: item.type,
    address: String(item.address),
    timestamp: String(item.timestamp),
    body: String(item.body),
  };
}

/** A delivery task of an event, due at `dueAt`: the item the dispatcher polls for. */
export function taskItem(
  event: Pick<WebhookEvent, 'id' | 'type' | 'address'>,
  endpointId: string,
  origin: string,
  trigger: 'schedule' | 'replay' | 'redeliver',
  dueAt: number,
  now: string,
): Record<string, unknown> {
  const pk = taskKey(event.id, endpointId, origin);
  return {
    pk,
    kind: 'task',
    eventId: event.id,
    eventType: event.type,
    address: event.address,
    endpointId,
    trigger,
    attempts: 0,
    createdAt: now,
    dueShard: dueShardOf(pk),
    dueAt,
    expiresAt: expiresAfter(now, EVENT_RETENTION_MS),
  };
}

/** Whether a transaction was cancelled because the item at `index` exists (its condition failed). */
function refusedAt(error: unknown, index: number): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons[index]?.Code === 'ConditionalCheckFailed';
}

export function createEventStore({ client, tableName }: EventTableAccess): EventStore & EventReader {
  async function record(event: WebhookEvent, endpointIds: readonly string[]): Promise<'recorded' | 'exists'> {
    const item = {
      pk: eventKey(event.id),
      kind: 'event',
      eventId: event.id,
      type: event.type,
      address: event.address,
      timestamp: event.timestamp,
      body: event.body,
      eventsOf: event.address,
      eventKey: `${event.timestamp}#${event.id}`,
      expiresAt: expiresAfter(event.timestamp, EVENT_RETENTION_MS),
    };
    const put = { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' };
    try {
      if (endpointIds.length === 0) {
        await withRetries(() => client.send(new PutCommand(put)), BACKGROUND_RETRIES);
      } else {
        const now = new Date().toISOString();
        const tasks = endpointIds.map((id) => ({
          Put: {
            TableName: tableName,
            Item: taskItem(event, id, LIVE_ORIGIN, 'schedule', Date.now(), now),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        }));
        // The event and its tasks together: an event is never stored without the deliveries it owes.
        await withRetries(
          () =>
            client.send(
              // No ClientRequestToken: the tasks' times differ on each try, and DynamoDB refuses a
              // token with other items. The event's condition makes a second commit a refusal.
              new TransactWriteCommand({ TransactItems: [{ Put: put }, ...tasks] }),
            ),
          BACKGROUND_RETRIES,
        );
      }
      return 'recorded';
    } catch (error) {
      if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException' || refusedAt(error, 0)) {
        return 'exists';
      }
      throw error;
    }
  }

  async function event(eventId: string): Promise<WebhookEvent | undefined> {
    const { Item } = await withRetries(() =>
      client.send(
        new GetCommand({ TableName: tableName, Key: { pk: eventKey(eventId) }, ConsistentRead: true }),
      ),
    );
    return eventOfItem(Item);
  }

  /**
   * Up to `limit` events of the wallet, newest first: Queries of the `events` index, each from
   * where the last ended, until the page is full or a few Queries are spent (a `type` filter reads
   * other types' events too); a page may then be short and still have a `nextCursor`.
   */
  async function page(
    address: string,
    { limit, type, cursor }: { limit: number; type?: string | undefined; cursor?: string | undefined },
  ): Promise<EventPage> {
    let after = cursor === undefined ? undefined : decodeCursor(address, cursor);
    const items: WebhookEvent[] = [];
    for (let query = 0; query < 5 && items.length < limit; query++) {
      const { Items, LastEvaluatedKey } = await withRetries(() =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: EVENTS_INDEX,
            KeyConditionExpression:
              after === undefined ? 'eventsOf = :a' : 'eventsOf = :a AND eventKey < :after',
            ExpressionAttributeValues: {
              ':a': address,
              ...(after === undefined ? {} : { ':after': after }),
              ...(type ? { ':t': type } : {}),
            },
            ...(type ? { FilterExpression: '#t = :t', ExpressionAttributeNames: { '#t': 'type' } } : {}),
            ScanIndexForward: false,
            Limit: limit - items.length,
          }),
        ),
      );
      for (const item of Items ?? []) {
        const found = eventOfItem(item);
        if (found) items.push(found);
      }
      if (!LastEvaluatedKey) return { items };
      after = String(LastEvaluatedKey.eventKey);
    }
    return { items, nextCursor: after === undefined ? undefined : encodeCursor(address, after) };
  }

  return { record, event, page };
}
