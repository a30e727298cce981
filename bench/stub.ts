/**
 * The stand-in for DynamoDB in the in-process benchmark: `send` of the SDK's `Client` answers at
 * once with a plausible output, so that what is timed is the function's own code.
 */
import { STATUS_INDEX, TAGS_INDEX } from '#shared/pets/pet-index.ts';
import { EVENTS_INDEX } from '#shared/webhooks/dynamodb/event-keys.ts';
import { DELIVERIES_INDEX } from '#shared/webhooks/dynamodb/keys.ts';
import { BENCH_ENDPOINT_URL, BENCH_ITEMS, BENCH_PNG_BASE64, fullPet } from './workload.ts';

/** The global symbol under which the instrumented bundles register their SDK `Client` classes. */
export const SMITHY_CLIENTS = 'wallet-catalog.bench.smithy-clients';

const METADATA = { httpStatusCode: 200, requestId: 'BENCH0REQUEST0ID', attempts: 1, totalRetryDelay: 0 };
const PET_ITEM = fullPet(BENCH_ITEMS.petId);
const WALLET_ITEM = {
  pk: 'WALLET#bench',
  kind: 'wallet',
  balance: 1_234_567,
  seq: 41,
  updatedAt: '2025-06-01T12:00:00.000Z',
};
const CREATED_AT = '2025-06-01T12:00:00.000Z';

/**
 * A page of `account`'s history as the index holds it: 20 entries, newest first. Built once per
 * account and answered as is, like the pet and the wallet above: built per call, its 20 objects
 * were charged to list-transfers as if its own code had made them.
 */
const historyPages = new Map<string, ReturnType<typeof buildHistoryPage>>();
function historyPage(account: string) {
  let page = historyPages.get(account);
  if (page === undefined) {
    page = buildHistoryPage(account);
    historyPages.set(account, page);
  }
  return page;
}

function buildHistoryPage(account: string) {
  return Array.from({ length: 20 }, (_, i) => ({
    pk: `ENTRY#${JSON.stringify([account, 41 - i])}`,
    kind: 'entry',
    account,
    seq: 41 - i,
    transferId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    transferKind: 'transfer',
    direction: i % 2 === 0 ? 'out' : 'in',
    amountMinor: 1234,
    balanceAfter: 1_234_567 - i * 1234,
    counterpartyAccount: 'W#someone-else',
    counterpartySeq: 7 + i,
    currency: 'USD',
    createdAt: CREATED_AT,
  }));
}

/** A movement to the caller (`BENCH_SUB`), whatever the id asked for. */
const transferItem = (pk: string) => ({
  pk,
  kind: 'transfer',
  transferKind: 'transfer',
  transferId: pk.slice('TRANSFER#'.length),
  fromAddress: 'someone-else',
  toAddress: process.env.BENCH_SUB ?? 'bench',
  amountMinor: 1234,
  currency: 'USD',
  createdAt: CREATED_AT,
  fromSeq: 8,
  toSeq: 41,
});

/** The caller, whose endpoints and events the webhooks table holds. */
const CALLER = process.env.BENCH_SUB ?? 'bench';

/**
 * A sealed secret as a deployed function stores it: the fields of an envelope (the stub's KMS
 * never opens it; nothing in the warm run delivers).
 */
const SEALED = {
  ciphertext: Buffer.alloc(12 + 43 + 16, 7).toString('base64'),
  wrappedKey: Buffer.alloc(184, 9).toString('base64'),
  keeper: 'kms:arn:aws:kms:us-east-1:123456789012:key/bench',
};

/** The caller's endpoint set: one endpoint, {@link BENCH_ITEMS}' (so create has room for more). */
const endpointSetItem = (pk: string) => ({
  pk,
  address: pk.slice('ENDPOINTS#'.length),
  version: 3,
  endpoints: [
    {
      id: BENCH_ITEMS.endpointId,
      address: pk.slice('ENDPOINTS#'.length),
      url: BENCH_ENDPOINT_URL,
      eventTypes: ['transfer.received', 'transfer.completed'],
      description: 'Orders service',
      status: 'enabled',
      createdAt: CREATED_AT,
      updatedAt: CREATED_AT,
      secrets: [{ sealed: SEALED, createdAt: CREATED_AT }],
    },
  ],
});

/** An event of the caller, whatever the id asked for. */
const eventItem = (eventId: string) => {
  const timestamp = new Date(Date.now() - 60_000).toISOString();
  return {
    pk: `EVENT#${eventId}`,
    kind: 'event',
    eventId,
    type: 'transfer.received',
    address: CALLER,
    timestamp,
    body: JSON.stringify({
      type: 'transfer.received',
      timestamp,
      data: {
        address: CALLER,
        transferId: BENCH_ITEMS.transferId,
        fromAddress: 'someone-else',
        amount: '12.34',
        currency: 'USD',
        status: 'completed',
      },
    }),
    eventsOf: CALLER,
    eventKey: `${timestamp}#${eventId}`,
    expiresAt: Math.floor(Date.now() / 1000) + 86_400,
  };
};

/** A page of the caller's events, newest first (built once, as the history page). */
const EVENTS_PAGE = Array.from({ length: 20 }, (_, i) =>
  eventItem(`evt_benchEvent${String(i).padStart(12, '0')}`),
);

/** A page of an endpoint's delivery log, newest first (built once). */
const deliveryPages = new Map<string, Record<string, unknown>[]>();
function deliveryPage(endpointId: string) {
  let page = deliveryPages.get(endpointId);
  if (page === undefined) {
    page = Array.from({ length: 20 }, (_, i) => {
      const attemptedAt = new Date(Date.parse(CREATED_AT) - i * 1000).toISOString();
      const eventId = `evt_benchEvent${String(i).padStart(12, '0')}`;
      const attemptKey = `${attemptedAt}#${eventId}#0001`;
      return {
        pk: `ATTEMPT#${endpointId}#${attemptKey}`,
        deliveriesOf: endpointId,
        attemptKey,
        eventId,
        eventType: 'transfer.received',
        attempt: 1,
        attemptedAt,
        outcome: 'delivered',
        statusCode: 200,
        durationMs: 41,
        trigger: 'schedule',
      };
    });
    deliveryPages.set(endpointId, page);
  }
  return page;
}

/**
 * A page of a pets index (status or tags) as the search reads it, ids only: 20 pets, more after
 * them (`LastEvaluatedKey`), so one Query fills the page, as in a catalog of many pets.
 */
const PET_INDEX_PAGE = {
  Items: Array.from({ length: 20 }, (_, i) => ({ id: BENCH_ITEMS.petId + i, petId: BENCH_ITEMS.petId + i })),
  LastEvaluatedKey: { id: BENCH_ITEMS.petId + 19 },
};

/** The pets of the catalog by id, each built once. */
const pets = new Map<number, Record<string, unknown>>();
function petItem(id: number) {
  let pet = pets.get(id);
  if (pet === undefined) {
    pet = { ...fullPet(id), revision: 'benchRevision0000', statusShard: 'available#0' };
    pets.set(id, pet);
  }
  return pet;
}

/**
 * The item DynamoDB holds at `pk`, if any: a wallet or a transfer (no hot marker, credit or
 * idempotency record: no wallet is hot and every key is new), a wallet's endpoint set, an event. Built once per key, as the pet and
 * the history page are: built per call, with the BatchGetItem's response around them, they were
 * charged to send-money as if its own code had made them.
 */
const items = new Map<string, Record<string, unknown>>();
function itemAt(pk: string): Record<string, unknown> | undefined {
  let item = items.get(pk);
  if (item === undefined) {
    item = pk.startsWith('WALLET#')
      ? { ...WALLET_ITEM, pk }
      : pk.startsWith('TRANSFER#')
        ? transferItem(pk)
        : pk.startsWith('ENDPOINTS#')
          ? endpointSetItem(pk)
          : pk.startsWith('EVENT#')
            ? eventItem(pk.slice('EVENT#'.length))
            : undefined;
    // Every request's idempotency key is new: only the keys that hold an item are kept.
    if (item) items.set(pk, item);
  }
  return item;
}

/**
 * How many DynamoDB commands the stub answered (the benchmark checks the round trips per request
 * with it), and how many KMS data keys (sealing a webhook secret) and S3 objects (a pet's image)
 * it answered, which are not DynamoDB's.
 */
export const stubCalls = { count: 0, dataKeys: 0, objects: 0 };

interface Sendable {
  readonly input?: {
    readonly Key?: Record<string, unknown>;
    readonly RequestItems?: Record<
      string,
      { readonly Keys?: readonly { readonly pk?: string; readonly id?: number }[] }
    >;
    readonly IndexName?: string;
    readonly ExpressionAttributeValues?: Record<string, unknown>;
    /** Only KMS's GenerateDataKey has it. */
    readonly KeySpec?: string;
    /** Only S3's commands have it; PutObject has a `Body` too. */
    readonly Bucket?: string;
    readonly Body?: unknown;
  };
}

/** KMS's answer to GenerateDataKey: a data key in the clear and wrapped (built once). */
const DATA_KEY = {
  Plaintext: new Uint8Array(32).fill(5),
  CiphertextBlob: new Uint8Array(184).fill(9),
  KeyId: 'arn:aws:kms:us-east-1:123456789012:key/bench',
  $metadata: METADATA,
};

/** The image S3 answers GetObject with: the bench's PNG, as its upload stored it. */
const IMAGE_BYTES = new Uint8Array(Buffer.from(BENCH_PNG_BASE64, 'base64'));

/**
 * What DynamoDB would answer through the DocumentClient: a pet for a GetItem by `id` (the pets
 * table's), the item at `pk` for a GetItem by `pk` and for each key of a BatchGetItem (`itemAt`,
 * or a pet by `id`), a page of the index a Query names, only metadata for writes. And what KMS
 * answers GenerateDataKey with, for the functions that seal a webhook secret, and S3 PutObject and
 * GetObject, for the image functions.
 */
function stubSend(command: Sendable): Promise<unknown> {
  const {
    Key: key,
    RequestItems,
    IndexName,
    ExpressionAttributeValues,
    KeySpec,
    Bucket,
    Body,
  } = command.input ?? {};
  if (KeySpec !== undefined) {
    stubCalls.dataKeys++;
    return Promise.resolve(DATA_KEY);
  }
  if (Bucket !== undefined) {
    stubCalls.objects++;
    return Promise.resolve(
      Body !== undefined
        ? { ETag: '"bench"', $metadata: METADATA }
        : {
            ContentType: 'image/png',
            Body: { transformToByteArray: () => Promise.resolve(IMAGE_BYTES) },
            $metadata: METADATA,
          },
    );
  }
  stubCalls.count++;
  if (key?.id !== undefined) return Promise.resolve({ Item: PET_ITEM, $metadata: METADATA });
  if (typeof key?.pk === 'string') {
    const item = itemAt(key.pk);
    return Promise.resolve(item ? { Item: item, $metadata: METADATA } : { $metadata: METADATA });
  }
  if (RequestItems) {
    const Responses = Object.fromEntries(
      Object.entries(RequestItems).map(([table, { Keys = [] }]) => [
        table,
        Keys.flatMap(({ pk, id }) => (id !== undefined ? petItem(id) : (itemAt(pk ?? '') ?? []))),
      ]),
    );
    return Promise.resolve({ Responses, UnprocessedKeys: {}, $metadata: METADATA });
  }
  switch (IndexName) {
    case undefined:
      return Promise.resolve({ $metadata: METADATA });
    case STATUS_INDEX:
    case TAGS_INDEX:
      return Promise.resolve({ ...PET_INDEX_PAGE, $metadata: METADATA });
    case EVENTS_INDEX:
      return Promise.resolve({ Items: EVENTS_PAGE, $metadata: METADATA });
    case DELIVERIES_INDEX:
      return Promise.resolve({
        Items: deliveryPage(String(ExpressionAttributeValues?.[':e'])),
        $metadata: METADATA,
      });
    default:
      return Promise.resolve({
        Items: historyPage(String(ExpressionAttributeValues?.[':a'])),
        $metadata: METADATA,
      });
  }
}

/**
 * Replaces `send` of every SDK `Client` class the loaded instrumented bundles registered; returns
 * how many there were. DynamoDBDocumentClient inherits `send` from `Client`, so its calls land here
 * with the DocumentClient's own command (native JavaScript input, nothing marshalled yet).
 */
export function stubSdkSend(): number {
  const registry = (globalThis as Record<symbol, unknown>)[Symbol.for(SMITHY_CLIENTS)];
  const classes = Array.isArray(registry) ? (registry as { prototype: { send: unknown } }[]) : [];
  for (const Client of classes) Client.prototype.send = stubSend;
  return classes.length;
}
