/**
 * The webhooks table as the endpoint use cases (../endpoints/ports.ts `WebhookEndpointStore`) and
 * the dispatcher (../model/ports.ts `DeliveryEndpointStore`) use it. Layout in ./keys.ts.
 */
import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactGetCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { withRetries, worstCaseCallMs } from '../../dynamodb/retry.ts';
import { InvalidParameterError } from '../../errors.ts';
import { decodeJsonCursor, encodeJsonCursor } from '../../util/json-cursor.ts';
import type { Clock } from '../../wallet/model/ports.ts';
import type {
  AttemptPage,
  AttemptView,
  CreateKeyRecord,
  EndpointSet,
  StoredEndpoint,
  WebhookEndpointStore,
} from '../endpoints/ports.ts';
import { type HealthState, healthAfter } from '../model/health.ts';
import type {
  DeliveryAttempt,
  DeliveryEndpoint,
  DeliveryEndpointStore,
  EndpointHealth,
} from '../model/ports.ts';
import { EVENT_RETENTION_MS } from '../model/webhook-event.ts';
import type { SecretSealer } from '../secrets/envelope.ts';
import { expiresAfter } from './event-keys.ts';
import { BACKGROUND_RETRIES } from './event-store.ts';
import {
  ATTEMPT_KEY,
  attemptItemKey,
  attemptKeyOf,
  createKeyItemKey,
  DELIVERIES_INDEX,
  endpointsKey,
} from './keys.ts';
import { createPutBatcher, type PutBatcher } from './put-batcher.ts';

export interface WebhookTableAccess {
  readonly client: DynamoDBDocumentClient;
  /** The physical name of the webhooks table. */
  readonly tableName: string;
}

/** The longest cursor accepted: what this store writes is under 200 characters. */
export const MAX_CURSOR_LENGTH = 400;

/** A cursor that is not one this store gave for this endpoint: a 400. */
export class InvalidDeliveryCursorError extends InvalidParameterError {
  constructor() {
    super("cursor is not a cursor of this endpoint's deliveries: start again without one");
  }
}

const encodeCursor = (endpointId: string, attemptKey: string): string =>
  encodeJsonCursor([endpointId, attemptKey]);

/** The index position a cursor names; refused unless it names this endpoint's log. */
function decodeCursor(endpointId: string, cursor: string): Record<string, string> {
  const decoded = decodeJsonCursor(cursor, { maxLength: MAX_CURSOR_LENGTH, length: 2 });
  const [owner, attemptKey] = decoded ?? [];
  // A position this store wrote, as the events' cursor is checked: DynamoDB refuses some others
  // (an empty key) with a ValidationException, which was a 500.
  if (owner !== endpointId || typeof attemptKey !== 'string' || !ATTEMPT_KEY.test(attemptKey))
    throw new InvalidDeliveryCursorError();
  return { pk: attemptItemKey(endpointId, attemptKey), deliveriesOf: endpointId, attemptKey };
}

/** The members of an attempt item that the log shows. */
function attemptOfItem(item: Record<string, unknown>): AttemptView {
  return {
    eventId: item.eventId as string,
    eventType: item.eventType as AttemptView['eventType'],
    attempt: item.attempt as number,
    attemptedAt: item.attemptedAt as string,
    outcome: item.outcome as AttemptView['outcome'],
    ...(item.statusCode === undefined ? {} : { statusCode: item.statusCode as number }),
    ...(item.errorClass === undefined ? {} : { errorClass: item.errorClass as AttemptView['errorClass'] }),
    durationMs: item.durationMs as number,
    ...(item.trigger === undefined ? {} : { trigger: item.trigger as AttemptView['trigger'] }),
  };
}

/** A wallet's endpoint set from its item (none yet: version 0, no endpoints). */
function setOfItem(address: string, item: Record<string, unknown> | undefined): EndpointSet {
  return {
    address,
    version: (item?.version as number | undefined) ?? 0,
    endpoints: (item?.endpoints as StoredEndpoint[] | undefined) ?? [],
  };
}

/**
 * The key's record, on condition that the key has none, or only one expired before this one was
 * made (DynamoDB's TTL deletes within days, not at once): two registrations with one key cannot
 * both commit, whichever read what.
 */
function keyRecordPut(tableName: string, address: string, record: CreateKeyRecord) {
  return {
    Put: {
      TableName: tableName,
      Item: {
        pk: createKeyItemKey(address, record.key),
        kind: 'idempotency',
        address,
        fingerprint: record.fingerprint,
        endpointId: record.endpointId,
        expiresAt: record.expiresAt,
        writtenAt: record.writtenAt,
      },
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
      ExpressionAttributeValues: { ':now': record.writtenAt },
    },
  };
}

/** The endpoint use cases' store. */
export function createWebhookEndpointStore({ client, tableName }: WebhookTableAccess): WebhookEndpointStore {
  return {
    longestWriteMs: worstCaseCallMs(),

    async readEndpoints(address) {
      const { Item } = await withRetries(() =>
        client.send(
          new GetCommand({ TableName: tableName, Key: { pk: endpointsKey(address) }, ConsistentRead: true }),
        ),
      );
      return setOfItem(address, Item);
    },

    /**
     * One TransactGetItems of both items, so a keyed registration costs the round trips of a
     * keyless one: a snapshot, though correctness rests on the write's conditions, not on it.
     */
    async readEndpointsAndKey(address, key) {
      const { Responses } = await withRetries(() =>
        client.send(
          new TransactGetCommand({
            TransactItems: [
              { Get: { TableName: tableName, Key: { pk: endpointsKey(address) } } },
              { Get: { TableName: tableName, Key: { pk: createKeyItemKey(address, key) } } },
            ],
          }),
        ),
      );
      const record = Responses?.[1]?.Item;
      return {
        set: setOfItem(address, Responses?.[0]?.Item),
        keyRecord:
          record === undefined
            ? undefined
            : {
                key,
                fingerprint: record.fingerprint as string,
                endpointId: record.endpointId as string,
                expiresAt: record.expiresAt as number,
                writtenAt: record.writtenAt as number,
              },
      };
    },

    /**
     * One TransactWriteItems of the set's item, for its ClientRequestToken: a try whose answer was
     * lost (it was applied) and the retry by {@link withRetries} are one write, and the retry
     * answers success whatever was written between (DynamoDB keeps a token 10 minutes). As first
     * built, a put's condition told an applied write only by the item being as it wrote it: with
     * another write between (the owner's, the dispatcher's health), the retry was refused and the
     * change read and applied again: an endpoint listed twice, a tenth stored behind a 422, a
     * rotation that dropped the previous secret, a deletion answered 404. A transaction costs 2
     * write units where a put costs 1, for writes as rare as an owner's changes. With a
     * registration's Idempotency-Key, the key's record is a second item of the same transaction.
     * Refused by a condition (the set's version, the key's record) or a conflict with another
     * write: `false`, the caller reads again.
     */
    async writeEndpoints(set, keyRecord) {
      const input = {
        ClientRequestToken: randomUUID(),
        TransactItems: [
          ...(keyRecord === undefined ? [] : [keyRecordPut(tableName, set.address, keyRecord)]),
          {
            Put: {
              TableName: tableName,
              Item: {
                pk: endpointsKey(set.address),
                address: set.address,
                version: set.version + 1,
                endpoints: set.endpoints,
              },
              ConditionExpression: set.version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
              ...(set.version === 0 ? {} : { ExpressionAttributeValues: { ':v': set.version } }),
            },
          },
        ],
      };
      return withRetries(async () => {
        try {
          await client.send(new TransactWriteCommand(input));
          return true;
        } catch (error) {
          if (error instanceof TransactionCanceledException) {
            const codes = error.CancellationReasons?.map((reason) => reason.Code) ?? [];
            if (codes.includes('ConditionalCheckFailed') || codes.includes('TransactionConflict'))
              return false;
          }
          throw error;
        }
      });
    },

    async listAttempts(endpointId, { limit, cursor }): Promise<AttemptPage> {
      const { Items, LastEvaluatedKey } = await withRetries(() =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: DELIVERIES_INDEX,
            KeyConditionExpression: 'deliveriesOf = :e',
            ExpressionAttributeValues: { ':e': endpointId },
            ScanIndexForward: false,
            Limit: limit,
            ...(cursor === undefined ? {} : { ExclusiveStartKey: decodeCursor(endpointId, cursor) }),
          }),
        ),
      );
      const items = (Items ?? []).map(attemptOfItem);
      const last = LastEvaluatedKey?.attemptKey as string | undefined;
      return { items, ...(last === undefined ? {} : { nextCursor: encodeCursor(endpointId, last) }) };
    },
  };
}

export interface DeliveryStoreDependencies extends WebhookTableAccess {
  readonly sealer: SecretSealer;
  readonly clock: Clock;
  /** Where the delivery log's items go; shared with the task store, so that their puts share requests. */
  readonly puts?: PutBatcher;
}

/** The health fields of an endpoint, those it has. */
function healthOf({ status, disabledReason, failingSince }: HealthState) {
  return {
    status,
    ...(disabledReason === undefined ? {} : { disabledReason }),
    ...(failingSince === undefined ? {} : { failingSince }),
  };
}

/** How often a health change is tried on a fresh read before it is left to the next attempt. */
const MAX_HEALTH_TRIES = 5;

/** The dispatcher's store: endpoints with their open secrets, and the delivery log. */
export function createDeliveryEndpointStore(deps: DeliveryStoreDependencies): DeliveryEndpointStore {
  const { client, tableName, sealer, clock } = deps;
  const endpoints = createWebhookEndpointStore(deps);
  const puts = deps.puts ?? createPutBatcher({ client, tableName, policy: BACKGROUND_RETRIES });

  async function deliveryEndpointOf(endpoint: StoredEndpoint): Promise<DeliveryEndpoint> {
    const now = clock.now();
    const signing = endpoint.secrets.filter(
      (s) => s.retiresAt === undefined || Date.parse(s.retiresAt) > now,
    );
    const secrets = await Promise.all(
      signing.map((s) => sealer.open(s.sealed, { address: endpoint.address, endpointId: endpoint.id })),
    );
    return {
      endpointId: endpoint.id,
      address: endpoint.address,
      url: endpoint.url,
      eventTypes: endpoint.eventTypes,
      status: endpoint.status,
      ...(endpoint.disabledReason === undefined ? {} : { disabledReason: endpoint.disabledReason }),
      ...(endpoint.failingSince === undefined ? {} : { failingSince: endpoint.failingSince }),
      secrets,
    };
  }

  return {
    async endpointsFor(address, eventType) {
      const set = await endpoints.readEndpoints(address);
      const chosen = set.endpoints.filter((e) => e.status === 'enabled' && e.eventTypes.includes(eventType));
      return Promise.all([...chosen].reverse().map(deliveryEndpointOf));
    },

    async endpointOf(address, endpointId) {
      const set = await endpoints.readEndpoints(address);
      const endpoint = set.endpoints.find((e) => e.id === endpointId);
      return endpoint && deliveryEndpointOf(endpoint);
    },

    async recordAttempt(attempt: DeliveryAttempt, seen?: HealthState): Promise<EndpointHealth> {
      const attemptKey = attemptKeyOf(attempt.attemptedAt, attempt.eventId, attempt.attempt);
      await puts.put({
        ...attempt,
        pk: attemptItemKey(attempt.endpointId, attemptKey),
        deliveriesOf: attempt.endpointId,
        attemptKey,
        expiresAt: expiresAfter(attempt.attemptedAt, EVENT_RETENTION_MS),
      });
      if (seen !== undefined && healthAfter(seen, attempt.outcome, attempt.attemptedAt) === undefined) {
        // Nothing to change, as the caller saw the endpoint moments ago: no read of it again.
        return { ...healthOf(seen), disabledNow: false };
      }
      for (let tries = 0; tries < MAX_HEALTH_TRIES; tries++) {
        const set = await endpoints.readEndpoints(attempt.address);
        const endpoint = set.endpoints.find((e) => e.id === attempt.endpointId);
        // Deleted meanwhile: nothing to keep healthy; the dispatcher stops as for a disabled one.
        if (!endpoint) return { status: 'disabled', disabledNow: false };
        const next = healthAfter(endpoint, attempt.outcome, attempt.attemptedAt);
        if (next === undefined) return { ...healthOf(endpoint), disabledNow: false };
        const { disabledReason: _r, failingSince: _f, ...rest } = endpoint;
        const after: StoredEndpoint = { ...rest, ...next, updatedAt: new Date(clock.now()).toISOString() };
        const written = await endpoints.writeEndpoints({
          ...set,
          endpoints: set.endpoints.map((e) => (e.id === endpoint.id ? after : e)),
        });
        if (written) return { ...next, disabledNow: next.status === 'disabled' };
      }
      // Owners changing their endpoints without pause: the next attempt records the health again.
      return { status: 'enabled', disabledNow: false };
    },
  };
}
