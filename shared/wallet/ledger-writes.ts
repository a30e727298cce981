import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { TemporarilyUnavailableError } from '../errors.ts';
import { accountKey, type EntryRecord, entryKey, ISSUANCE_ACCOUNT } from './ledger-keys.ts';

/* The building blocks of a movement's read and transaction, shared by transfers and deposits. */

/** Where the wallet ledger lives: one DocumentClient per container, and the table's physical name. */
export interface WalletTableAccess {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

export type CancellationReason = { Code?: string; Item?: Record<string, AttributeValue> };

export function cancellationReasons(error: unknown): CancellationReason[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  return (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons;
}

/**
 * How often a movement is re-read and re-tried when another one changed one of its accounts
 * between the read and the transaction, and for how long at most: a hot account (the issuance
 * account under many deposits) clears in a few tries; past that the caller gets a 503.
 */
/** Nothing was written, and another try soon may succeed: a 503 with Retry-After. */
export const busy = (message: string, cause?: unknown) =>
  new TemporarilyUnavailableError(message, 1, cause === undefined ? undefined : { cause });

export const VERSION_ATTEMPTS = 12;
export const VERSION_DEADLINE_MS = 3_000;
// Also the latest a movement's transaction may start: 3 s + worstCaseCallMs (6.5 s) < the 10 s timeout.
export const pause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 5 * 2 ** attempt)));

/**
 * After a cancelled movement: when one of its two accounts (the transaction's items 0 and 1)
 * changed since it was read, waits before the next read and build; throws `busy(message)` once
 * the attempts or the deadline run out, and `error` itself when something else cancelled it.
 */
export async function awaitNextVersion(
  reasons: readonly CancellationReason[],
  error: unknown,
  progress: { readonly attempt: number; readonly started: number; readonly message: string },
): Promise<void> {
  const moved =
    reasons[0]?.Code === 'ConditionalCheckFailed' || reasons[1]?.Code === 'ConditionalCheckFailed';
  if (!moved) throw error;
  const { attempt, started, message } = progress;
  if (attempt >= VERSION_ATTEMPTS || Date.now() - started > VERSION_DEADLINE_MS) throw busy(message, error);
  await pause(attempt);
}

/** An account as read before a movement: what its transaction's condition expects to find. */
export interface AccountState {
  readonly exists: boolean;
  readonly balance: bigint;
  readonly seq: number;
}

export const stateOf = (item: Record<string, unknown> | undefined): AccountState => ({
  exists: item !== undefined,
  balance: BigInt((item?.balance as number | bigint | undefined) ?? 0),
  seq: (item?.seq as number | undefined) ?? 0,
});

/** A number the DocumentClient writes exactly: a bigint only beyond 2^53. */
export const exact = (value: bigint): number | bigint =>
  value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
    ? Number(value)
    : value;

/** The reads and transaction items of movements on one table. */
export function createLedgerWrites({ client, tableName }: WalletTableAccess) {
  /** Items by key, strongly consistent, in one BatchGetItem (plus one per unprocessed remainder). */
  async function readMany(keys: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    const found = new Map<string, Record<string, unknown>>();
    let pending: { pk: string }[] = keys.map((pk) => ({ pk }));
    while (pending.length > 0) {
      const request = pending;
      const { Responses, UnprocessedKeys } = await withRetries(() =>
        client.send(
          new BatchGetCommand({ RequestItems: { [tableName]: { Keys: request, ConsistentRead: true } } }),
        ),
      );
      for (const item of Responses?.[tableName] ?? []) found.set(item.pk as string, item);
      pending = (UnprocessedKeys?.[tableName]?.Keys as { pk: string }[] | undefined) ?? [];
    }
    return found;
  }

  /**
   * The two updates of a movement's accounts: each on condition that it still holds what was
   * read, so that its entry's seq and running balance are exact, and no movement is lost.
   */
  function accountUpdate(account: string, before: AccountState, deltaMinor: bigint, now: string) {
    // A wallet opened before entries existed has no seq: it is at 0 all the same.
    const versioned = before.exists
      ? 'balance = :before AND (seq = :seq OR attribute_not_exists(seq))'
      : 'attribute_not_exists(pk)';
    return {
      Update: {
        TableName: tableName,
        Key: { pk: accountKey(account) },
        UpdateExpression:
          'SET balance = :after, seq = :next, updatedAt = :now, kind = :kind, openedAt = if_not_exists(openedAt, :now)',
        ConditionExpression: versioned,
        ExpressionAttributeValues: {
          ...(before.exists ? { ':before': exact(before.balance), ':seq': before.seq } : {}),
          ':after': exact(before.balance + deltaMinor),
          ':next': before.seq + 1,
          ':now': now,
          ':kind': account === ISSUANCE_ACCOUNT ? 'issuance' : 'wallet',
        },
      },
    };
  }

  /** The two entries of a movement from `from` to `to`, each with its account's balance after it. */
  function entryPuts(
    movement: {
      transferId: string;
      transferKind: 'transfer' | 'deposit';
      amountMinor: number;
      currency: string;
      createdAt: string;
    },
    from: { account: string; state: AccountState },
    to: { account: string; state: AccountState },
  ) {
    const amount = BigInt(movement.amountMinor);
    const side = (
      self: typeof from,
      other: typeof from,
      direction: 'in' | 'out',
      delta: bigint,
    ): EntryRecord => ({
      account: self.account,
      seq: self.state.seq + 1,
      transferId: movement.transferId,
      transferKind: movement.transferKind,
      direction,
      amountMinor: movement.amountMinor,
      balanceAfter: exact(self.state.balance + delta),
      counterpartyAccount: other.account,
      counterpartySeq: other.state.seq + 1,
      currency: movement.currency,
      createdAt: movement.createdAt,
    });
    return [side(from, to, 'out', -amount), side(to, from, 'in', amount)].map((entry) => ({
      Put: {
        TableName: tableName,
        Item: { pk: entryKey(entry.account, entry.seq), kind: 'entry', ...entry },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    }));
  }

  return { readMany, accountUpdate, entryPuts };
}
