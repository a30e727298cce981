/**
 * The stand-in for DynamoDB in the in-process benchmark: `send` of the SDK's `Client` answers at
 * once with a plausible output, so that what is timed is the function's own code.
 */
import { fullPet } from './workload.ts';

/** The global symbol under which the instrumented bundles register their SDK `Client` classes. */
export const SMITHY_CLIENTS = 'wallet-catalog.bench.smithy-clients';

const METADATA = { httpStatusCode: 200, requestId: 'BENCH0REQUEST0ID', attempts: 1, totalRetryDelay: 0 };
const PET_ITEM = fullPet(2 ** 52 + 1);
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

/**
 * The item DynamoDB holds at `pk`, if any: a wallet or a transfer (no hot marker, credit or
 * idempotency record: no wallet is hot and every key is new). Built once per key, as the pet and
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
        : undefined;
    // Every request's idempotency key is new: only the keys that hold an item are kept.
    if (item) items.set(pk, item);
  }
  return item;
}

/** How many commands the stub answered; the benchmark checks the round trips per request with it. */
export const stubCalls = { count: 0 };

interface Sendable {
  readonly input?: {
    readonly Key?: Record<string, unknown>;
    readonly RequestItems?: Record<string, { readonly Keys?: readonly { readonly pk?: string }[] }>;
    readonly IndexName?: string;
    readonly ExpressionAttributeValues?: Record<string, unknown>;
  };
}

/**
 * What DynamoDB would answer through the DocumentClient: a pet for a GetItem (the only one is the
 * pets table's, by `id`), the wallets and transfers of a BatchGetItem (`itemAt`), a page of history
 * for a Query, only metadata for writes.
 */
function stubSend(command: Sendable): Promise<unknown> {
  stubCalls.count++;
  const { Key: key, RequestItems, IndexName, ExpressionAttributeValues } = command.input ?? {};
  if (key?.id !== undefined) return Promise.resolve({ Item: PET_ITEM, $metadata: METADATA });
  if (RequestItems) {
    const Responses = Object.fromEntries(
      Object.entries(RequestItems).map(([table, { Keys = [] }]) => [
        table,
        Keys.flatMap(({ pk = '' }) => itemAt(pk) ?? []),
      ]),
    );
    return Promise.resolve({ Responses, UnprocessedKeys: {}, $metadata: METADATA });
  }
  if (IndexName !== undefined)
    return Promise.resolve({
      Items: historyPage(String(ExpressionAttributeValues?.[':a'])),
      $metadata: METADATA,
    });
  return Promise.resolve({ $metadata: METADATA });
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
