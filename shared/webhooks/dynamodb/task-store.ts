/**
 * The delivery tasks of the webhooks table (layout in ./event-keys.ts): what the dispatcher polls,
 * claims with a lease, ends or makes due again, and the replays it expands into tasks. Every write
 * after a claim is conditional on the lease, so a dispatcher whose lease lapsed (it hung, or was
 * killed and another took over) changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import type { DeliveryTask, DueWork, ReplayTask, TaskEnd, TaskStore } from '../dispatch/ports.ts';
import type { ReplayStart } from '../events/ports.ts';
import { isWebhookEventType, type WebhookEventType } from '../model/event-types.ts';
import { REPLAY_SETTLE_MS } from '../model/replay-settle.ts';
import { EVENT_RETENTION_MS, type WebhookEvent } from '../model/webhook-event.ts';
import {
  DUE_INDEX,
  DUE_SHARDS,
  dueShardKey,
  dueShardOf,
  EVENTS_INDEX,
  expiresAfter,
  replayKey,
} from './event-keys.ts';
import {
  ACTIONS_PER_TRANSACTION,
  BACKGROUND_RETRIES,
  type EventTableAccess,
  eventOfItem,
  isConditionFailure,
  putTasksIfAbsent,
  refusedActions,
  taskItem,
} from './event-store.ts';
import { createPutBatcher, type PutBatcher } from './put-batcher.ts';

/** A task or replay as its item stores it; `undefined` for anything else. */
function workOfItem(item: Record<string, unknown>): DueWork | undefined {
  const dueAt = Number(item.dueAt);
  if (item.kind === 'task' && typeof item.eventType === 'string' && isWebhookEventType(item.eventType)) {
    const carried =
      typeof item.body === 'string' && typeof item.timestamp === 'string'
        ? {
            event: {
              id: String(item.eventId),
              type: item.eventType,
              address: String(item.address),
              timestamp: item.timestamp,
              body: item.body,
            },
          }
        : {};
    return {
      kind: 'task',
      key: String(item.pk),
      eventId: String(item.eventId),
      eventType: item.eventType,
      address: String(item.address),
      ...carried,
      endpointId: String(item.endpointId),
      trigger: item.trigger === 'replay' || item.trigger === 'redeliver' ? item.trigger : 'schedule',
      attempts: Number(item.attempts ?? 0),
      dueAt,
    };
  }
  if (item.kind === 'replay') {
    return {
      kind: 'replay',
      key: String(item.pk),
      address: String(item.address),
      endpointId: String(item.endpointId),
      replayId: String(item.replayId),
      since: String(item.since),
      cursor: typeof item.cursor === 'string' ? item.cursor : undefined,
      dueAt,
    };
  }
  return undefined;
}

/** A claim: the task's `dueAt` moves to the lease, on condition that it is still what was read. */
const claimOf = (work: DueWork, leaseUntil: number) => ({
  UpdateExpression: 'SET dueAt = :lease',
  ConditionExpression: 'dueAt = :seen AND attribute_exists(dueShard)',
  ExpressionAttributeValues: { ':seen': work.dueAt, ':lease': leaseUntil },
});

export function createTaskStore({
  client,
  tableName,
  puts = createPutBatcher({ client, tableName, policy: BACKGROUND_RETRIES }),
}: EventTableAccess & {
  /** Where a delivered task's end goes; shared with the delivery log's, so that they share requests. */
  readonly puts?: PutBatcher;
}): TaskStore & {
  /** A replay of the wallet's events since `since` to one endpoint, due now, or the one in progress. */
  startReplay(address: string, endpointId: string, since: string, now: number): Promise<ReplayStart>;
  /** One more delivery of an event to one endpoint, due now, attempts counted from 1 again. */
  redeliver(event: WebhookEvent, endpointId: string, now: number): Promise<void>;
} {
  /** The item each task was read from: a delivered task's end is that item, ended. */
  const itemsRead = new WeakMap<DueWork, Record<string, unknown>>();

  /** A conditional update that may find the task taken: false then, other failures thrown. */
  async function update(
    key: string,
    input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
  ) {
    try {
      await withRetries(
        () => client.send(new UpdateCommand({ TableName: tableName, Key: { pk: key }, ...input })),
        BACKGROUND_RETRIES,
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  const leased = (leaseUntil: number) => ({
    ConditionExpression: 'dueAt = :lease AND attribute_exists(dueShard)',
    lease: { ':lease': leaseUntil },
  });

  return {
    async due(now, limit) {
      const perShard = Math.max(1, Math.ceil(limit / DUE_SHARDS));
      const pages = await Promise.all(
        Array.from({ length: DUE_SHARDS }, (_, shard) =>
          withRetries(
            () =>
              client.send(
                new QueryCommand({
                  TableName: tableName,
                  IndexName: DUE_INDEX,
                  KeyConditionExpression: 'dueShard = :s AND dueAt <= :now',
                  ExpressionAttributeValues: { ':s': dueShardKey(shard), ':now': now },
                  Limit: perShard,
                }),
              ),
            BACKGROUND_RETRIES,
          ),
        ),
      );
      const works = pages
        .flatMap((page) => page.Items ?? [])
        .flatMap((item) => {
          const work = workOfItem(item);
          if (work) itemsRead.set(work, item);
          return work ?? [];
        })
        .sort((a, b) => a.dueAt - b.dueAt);
      return { works, more: pages.some((page) => page.LastEvaluatedKey !== undefined) };
    },

    /**
     * One transaction per ACTIONS_PER_TRANSACTION claims (one alone is a plain update, at half the
     * write units).
     * A task taken meanwhile cancels it by its condition: left out, the rest are claimed again.
     */
    async claimAll(works, leaseUntil) {
      const until = (index: number) =>
        typeof leaseUntil === 'number' ? leaseUntil : (leaseUntil[index] as number);
      if (works.length === 1)
        return [await update((works[0] as DueWork).key, claimOf(works[0] as DueWork, until(0)))];
      const claimed = works.map(() => false);
      for (let at = 0; at < works.length; at += ACTIONS_PER_TRANSACTION) {
        let pending = works.slice(at, at + ACTIONS_PER_TRANSACTION).map((_, n) => at + n);
        while (pending.length > 0) {
          const actions = pending.map((index) => {
            const work = works[index] as DueWork;
            return {
              Update: { TableName: tableName, Key: { pk: work.key }, ...claimOf(work, until(index)) },
            };
          });
          // One token for every try: a try whose answer was lost and its retry are one commit.
          const token = randomUUID();
          try {
            await withRetries(
              () =>
                client.send(new TransactWriteCommand({ TransactItems: actions, ClientRequestToken: token })),
              BACKGROUND_RETRIES,
            );
            for (const index of pending) claimed[index] = true;
            break;
          } catch (error) {
            const taken = refusedActions(error);
            if (taken.size === 0) throw error;
            pending = pending.filter((_, action) => !taken.has(action));
          }
        }
      }
      return claimed;
    },

    async finish(task: DeliveryTask, leaseUntil: number, end: TaskEnd, now: string) {
      const item = itemsRead.get(task);
      if (end === 'delivered' && item !== undefined) {
        // Delivered is final, whoever holds the task now (a lease that lapsed mid-attempt): its end
        // needs no condition, so it is a put, and goes in a request with the attempt's record. The
        // ended task no longer carries the body, nor is it in the `due` index.
        const { dueShard: _shard, dueAt: _at, body: _body, timestamp: _timestamp, ...kept } = item;
        await puts.put({ ...kept, pk: String(item.pk), ended: end, endedAt: now });
        return;
      }
      const { ConditionExpression, lease } = leased(leaseUntil);
      await update(task.key, {
        UpdateExpression: 'REMOVE dueShard, dueAt SET #end = :end, endedAt = :now',
        ConditionExpression,
        ExpressionAttributeNames: { '#end': 'ended' },
        ExpressionAttributeValues: { ...lease, ':end': end, ':now': now },
      });
    },

    async reschedule(work, leaseUntil, dueAt, attempts) {
      const { ConditionExpression, lease } = leased(leaseUntil);
      await update(work.key, {
        UpdateExpression: attempts === undefined ? 'SET dueAt = :at' : 'SET dueAt = :at, attempts = :n',
        ConditionExpression,
        ExpressionAttributeValues: {
          ...lease,
          ':at': dueAt,
          ...(attempts === undefined ? {} : { ':n': attempts }),
        },
      });
    },

    async expandReplay(
      replay: ReplayTask,
      leaseUntil: number,
      eventTypes: readonly WebhookEventType[],
      limit: number,
    ) {
      const from = replay.cursor ?? replay.since;
      const { Items, LastEvaluatedKey } = await withRetries(
        () =>
          client.send(
            new QueryCommand({
              TableName: tableName,
              IndexName: EVENTS_INDEX,
              KeyConditionExpression:
                replay.cursor === undefined
                  ? 'eventsOf = :a AND eventKey >= :from'
                  : 'eventsOf = :a AND eventKey > :from',
              ExpressionAttributeValues: { ':a': replay.address, ':from': from },
              ScanIndexForward: true,
              Limit: limit,
            }),
          ),
        BACKGROUND_RETRIES,
      );
      const owed = (Items ?? [])
        .flatMap((item) => eventOfItem(item) ?? [])
        .filter((event) => eventTypes.includes(event.type));
      const now = new Date().toISOString();
      const last = (Items ?? []).at(-1);
      if (owed.length > 0) {
        // How far this step goes, before its tasks: a replay asked meanwhile is judged on it. On
        // the cursor alone, which moves after them, a step whose cursor write failed had tasks
        // nobody counted; ended while the endpoint was disabled, a later replay answered "covered"
        // sent them never (review helper-36).
        const { ConditionExpression, lease } = leased(leaseUntil);
        const held = await update(replay.key, {
          UpdateExpression: 'SET reach = :reach',
          ConditionExpression,
          ExpressionAttributeValues: { ...lease, ':reach': String(last?.eventKey) },
        });
        if (!held) return false;
      }
      // Expanded before by a dispatcher whose lease lapsed: those tasks stand.
      await putTasksIfAbsent(
        { client, tableName },
        owed.map((event) => taskItem(event, replay.endpointId, replay.replayId, 'replay', Date.now(), now)),
      );
      const done = LastEvaluatedKey === undefined;
      const { ConditionExpression, lease } = leased(leaseUntil);
      await update(replay.key, {
        UpdateExpression: done
          ? 'REMOVE dueShard, dueAt SET #end = :end, endedAt = :now'
          : 'SET #cursor = :cursor, dueAt = :at',
        ConditionExpression,
        ExpressionAttributeNames: done ? { '#end': 'ended' } : { '#cursor': 'cursor' },
        ExpressionAttributeValues: done
          ? { ...lease, ':end': 'expanded', ':now': now }
          : { ...lease, ':cursor': String(last?.eventKey), ':at': Date.now() },
      });
      return done;
    },

    async startReplay(address, endpointId, since, now) {
      const replayId = `rpl_${randomUUID()}`;
      const pk = replayKey(endpointId);
      const at = new Date(now).toISOString();
      try {
        await withRetries(() =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: {
                pk,
                kind: 'replay',
                replayId,
                address,
                endpointId,
                since,
                createdAt: at,
                dueShard: dueShardOf(pk),
                dueAt: now + REPLAY_SETTLE_MS,
                expiresAt: expiresAfter(at, EVENT_RETENTION_MS),
              },
              // The endpoint's replay before this one must be done: one at a time.
              ConditionExpression: 'attribute_not_exists(pk) OR attribute_exists(#ended)',
              ExpressionAttributeNames: { '#ended': 'ended' },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
        const running = unmarshall(error.Item);
        // This request's own put, whose answer was lost and whose retry found it: started.
        if (running.replayId === replayId) return { started: true, replayId, since, startedAt: at };
        return {
          started: false,
          replayId: String(running.replayId),
          since: String(running.since),
          startedAt: String(running.createdAt),
          expandedTo: [running.reach, running.cursor]
            .filter((key): key is string => typeof key === 'string')
            .sort()
            .at(-1),
        };
      }
      return { started: true, replayId, since, startedAt: at };
    },

    async redeliver(event, endpointId, now) {
      const at = new Date(now).toISOString();
      await withRetries(() =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: taskItem(event, endpointId, `rdl_${randomUUID()}`, 'redeliver', now, at),
          }),
        ),
      );
    },
  };
}
