/**
 * The events of the webhooks table: stored once by the deriver with their delivery tasks, read by
 * the events API, replays and the dispatcher. Layout in ./event-keys.ts.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type RetryPolicy, withRetries } from '../../dynamodb/retry.ts';
import { InvalidParameterError } from '../../errors.ts';
import { eachLimited } from '../../util/each-limited.ts';
import { decodeJsonCursor, encodeJsonCursor, ownerTag } from '../../util/json-cursor.ts';
import type { EventPage, EventReader, EventStore, EventToRecord, RecordOutcome } from '../events/ports.ts';
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

/** The longest cursor accepted: what this store writes is about 110 characters, whatever the address. */
export const MAX_CURSOR_LENGTH = 400;

/** A cursor that is not one this store gave for this wallet: a 400. */
export class InvalidEventCursorError extends InvalidParameterError {
  constructor() {
    super('cursor is not a cursor of your events: start again without one');
  }
}

const encodeCursor = (address: string, key: string) => encodeJsonCursor([ownerTag(address), key]);

function decodeCursor(address: string, cursor: string): string {
  const decoded = decodeJsonCursor(cursor, { maxLength: MAX_CURSOR_LENGTH, length: 2 });
  const [owner, key] = decoded ?? [];
  // The address itself: a cursor given before the owner's tag replaced it, which a client walking
  // the pages across that deploy still holds.
  const own = owner === ownerTag(address) || owner === address;
  if (!own || typeof key !== 'string' || !/#evt_[A-Za-z0-9_-]{22}$/.test(key)) {
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

/**
 * The longest body a task carries (UTF-8 bytes): with it the task item stays within one write unit
 * (1 KB), so its three writes cost what they cost without it, and the dispatcher need not read the
 * event. A longer body (a payment's metadata can make it about 65 KB) is read from the event instead.
 */
export const CARRIED_BODY_MAX_BYTES = 600;

const carriesBody = (event: WebhookEvent) => Buffer.byteLength(event.body) <= CARRIED_BODY_MAX_BYTES;

/** A delivery task of an event, due at `dueAt`: the item the dispatcher polls for. */
export function taskItem(
  event: WebhookEvent,
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
    ...(carriesBody(event) ? { timestamp: event.timestamp, body: event.body } : {}),
    attempts: 0,
    createdAt: now,
    dueShard: dueShardOf(pk),
    dueAt,
    expiresAt: expiresAfter(now, EVENT_RETENTION_MS),
  };
}

/** A conditional write refused by its condition (the item exists, or is not as read). */
export const isConditionFailure = (error: unknown) =>
  (error as Error | undefined)?.name === 'ConditionalCheckFailedException';

/** How many task puts {@link putTasksIfAbsent} has in flight. */
const TASK_PUTS_AT_ONCE = 10;

/**
 * Puts task items one by one, a few at a time, each unless its key is stored: a task written
 * stands, whoever wrote it (whether it ended or not). Throws when one cannot be written.
 */
export async function putTasksIfAbsent(
  { client, tableName }: EventTableAccess,
  items: readonly Record<string, unknown>[],
): Promise<void> {
  await eachLimited(items, TASK_PUTS_AT_ONCE, async (item) => {
    try {
      await withRetries(
        () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: item,
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        BACKGROUND_RETRIES,
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  });
}

/** The actions of a transaction cancelled because their item exists (their condition failed). */
export function refusedActions(error: unknown): ReadonlySet<number> {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return new Set();
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return new Set(
    reasons.flatMap((reason, index) => (reason?.Code === 'ConditionalCheckFailed' ? [index] : [])),
  );
}

/**
 * Actions per TransactWriteItems: DynamoDB's most. Measured against 25 (20 × 5 into one merchant,
 * 3 runs each): p99 1.20–1.21 s with 100, 1.43–1.79 s with 25, the dispatcher's claims then taking
 * two requests per poll.
 */
export const ACTIONS_PER_TRANSACTION = 100;

/** How many transactions one `recordAll` has in flight. */
const TRANSACTIONS_AT_ONCE = 4;

/** DynamoDB's most for one TransactWriteItems: a larger one is refused whole (ValidationException). */
const TRANSACTION_MAX_BYTES = 4 * 1024 * 1024;

/** More than an action's keys and attributes other than the body take. */
const ACTION_BYTES_BESIDE_BODY = 1_024;

/**
 * What an event and its tasks weigh in a transaction, counted high: the body as the request's JSON
 * writes it (escapes included), in the event and in each task that carries it.
 */
function bytesOf({ event, endpointIds }: EventToRecord): number {
  const body = Buffer.byteLength(JSON.stringify(event.body));
  const carried = carriesBody(event) ? body : 0;
  return body + endpointIds.length * carried + (1 + endpointIds.length) * ACTION_BYTES_BESIDE_BODY;
}

/**
 * Events in groups of whole events (an event and its tasks), each group at most a transaction's
 * actions and bytes. An event with more tasks than that cannot be (an endpoint set holds ten), nor
 * one that large (a body of the largest metadata is about 65 KB). Counted by actions only, 100
 * such events came to over 4 MB, and the whole batch failed at every delivery of the stream.
 */
function transactionsOf(entries: readonly EventToRecord[]): number[][] {
  const groups: number[][] = [];
  let group: number[] = [];
  let actions = 0;
  let bytes = 0;
  entries.forEach((entry, index) => {
    const size = 1 + entry.endpointIds.length;
    const weight = bytesOf(entry);
    const full = actions + size > ACTIONS_PER_TRANSACTION || bytes + weight > TRANSACTION_MAX_BYTES;
    if (full && group.length > 0) {
      groups.push(group);
      group = [];
      actions = 0;
      bytes = 0;
    }
    group.push(index);
    actions += size;
    bytes += weight;
  });
  if (group.length > 0) groups.push(group);
  return groups;
}

export function createEventStore({ client, tableName }: EventTableAccess): EventStore & EventReader {
  const eventPut = (event: WebhookEvent) => ({
    TableName: tableName,
    Item: {
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
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });

  /**
   * One transaction for the events at `indexes`, each with its tasks. An event found stored is
   * `exists` (its condition cancelled the transaction: it is left out and the rest committed
   * again); any other failure, after the background retries, is each remaining event's.
   */
  async function recordGroup(
    entries: readonly EventToRecord[],
    indexes: readonly number[],
    outcomes: RecordOutcome[],
  ): Promise<void> {
    let pending = indexes;
    while (pending.length > 0) {
      const now = new Date().toISOString();
      /** Which event each action belongs to. */
      const owners: number[] = [];
      const actions = pending.flatMap((index) => {
        const { event, endpointIds } = entries[index] as EventToRecord;
        const puts = [
          { Put: eventPut(event) },
          ...endpointIds.map((id) => ({
            Put: {
              TableName: tableName,
              Item: taskItem(event, id, LIVE_ORIGIN, 'schedule', Date.now(), now),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          })),
        ];
        owners.push(...puts.map(() => index));
        return puts;
      });
      // One token for every try of these very actions: a try whose answer was lost (it committed)
      // and the retry after it are one commit, so the retry answers success, not "stored before".
      const token = randomUUID();
      try {
        // The events and their tasks together: an event is never stored without the deliveries it
        // owes. The events' conditions make another deriver's commit of them a refusal.
        await withRetries(
          () => client.send(new TransactWriteCommand({ TransactItems: actions, ClientRequestToken: token })),
          BACKGROUND_RETRIES,
        );
        for (const index of pending) outcomes[index] = 'recorded';
        return;
      } catch (error) {
        const stored = new Set([...refusedActions(error)].map((action) => owners[action] as number));
        if (stored.size === 0) {
          for (const index of pending) outcomes[index] = { failed: error };
          return;
        }
        for (const index of stored) outcomes[index] = 'exists';
        pending = pending.filter((index) => !stored.has(index));
      }
    }
  }

  async function recordAll(entries: readonly EventToRecord[]): Promise<readonly RecordOutcome[]> {
    const outcomes: RecordOutcome[] = entries.map(() => 'exists');
    await eachLimited(transactionsOf(entries), TRANSACTIONS_AT_ONCE, (indexes) =>
      recordGroup(entries, indexes, outcomes),
    );
    return outcomes;
  }

  /** Rare (an endpoint enabled during a slow commit, a batch given again): a conditional put each. */
  async function addLiveTasks(entries: readonly EventToRecord[]): Promise<void> {
    const now = new Date().toISOString();
    await putTasksIfAbsent(
      { client, tableName },
      entries.flatMap(({ event, endpointIds }) =>
        endpointIds.map((id) => taskItem(event, id, LIVE_ORIGIN, 'schedule', Date.now(), now)),
      ),
    );
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

  return { recordAll, addLiveTasks, event, page };
}
