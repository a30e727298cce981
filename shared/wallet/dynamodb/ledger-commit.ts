import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import type { AccountState } from '../model/accounts.ts';
import { ISSUANCE_ACCOUNT } from '../model/accounts.ts';
import type { EntryRecord } from '../model/entry.ts';
import { readItems } from './consistent-read.ts';
import { accountKey, entryItem } from './keys.ts';
import type { WalletTableAccess } from './table-access.ts';

/* The one commit routine of every movement (transfer, deposit, posting): a consistent read of the
   items it depends on that it does not already know (a read that still holds, a recipient known
   hot), then ONE TransactWriteItems whose items are named, so that a cancellation says which item
   refused by name, never by position. */

type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/** Why DynamoDB cancelled one item of a transaction; `item` is the item as stored, when asked for. */
export interface ItemRefusal {
  readonly code: string;
  readonly item?: Record<string, AttributeValue> | undefined;
}

export type CommitResult =
  | { readonly committed: true }
  /** Nothing was written; every named item that refused, with why (`None` items are left out). */
  | { readonly committed: false; readonly refused: Readonly<Record<string, ItemRefusal>> };

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

/** The reads, the transaction and the transaction items of movements on one table. */
export function createLedgerCommit({ client, tableName }: WalletTableAccess) {
  const readMany = (keys: readonly string[]) => readItems({ client, tableName }, keys);

  /**
   * Writes `items` in one TransactWriteItems. A cancellation by a failed condition or a conflict is
   * an answer, not a failure: it comes back named, and is never resent as it was (the caller reads
   * again and decides). Any other cancellation is thrown to `withRetries`: one cancelled only for
   * throttling is retried like the passing faults, with the same input and token (DynamoDB applies
   * it at most once) after a backoff, and any other (a validation error) is thrown, as it would fail
   * again. Answered as a refusal, throttling made the caller read and write again at once,
   * thousands of times a second against a table already short of capacity.
   */
  async function commit(items: Readonly<Record<string, TransactItem>>, token: string): Promise<CommitResult> {
    const names = Object.keys(items);
    const input = {
      ClientRequestToken: token,
      TransactItems: names.map((name) => items[name] as TransactItem),
    };
    const reasons = await withRetries(async () => {
      try {
        await client.send(new TransactWriteCommand(input));
        return undefined;
      } catch (error) {
        const cancelled = cancellationReasons(error);
        if (
          cancelled?.some(({ Code }) => Code === 'ConditionalCheckFailed' || Code === 'TransactionConflict')
        ) {
          return cancelled;
        }
        throw error;
      }
    });
    if (!reasons) return { committed: true };
    const refused: Record<string, ItemRefusal> = {};
    names.forEach((name, i) => {
      const reason = reasons[i];
      if (reason?.Code && reason.Code !== 'None') refused[name] = { code: reason.Code, item: reason.Item };
    });
    return { committed: false, refused };
  }

  /**
   * An account's update by `deltaMinor`, on condition that it still holds what was read, so that
   * its entry's seq and running balance are exact and no movement is lost. `entries` is how many
   * entries the movement writes on it (a posting batch writes several). `directClaim` is the claim
   * of a payment crediting the wallet directly, recorded so that the next claimant sees it settled
   * (./direct-credit-claim.ts).
   */
  function accountUpdate(
    account: string,
    before: AccountState,
    deltaMinor: bigint,
    now: string,
    entries = 1,
    directClaim?: string,
  ) {
    // A wallet opened before entries existed has no seq: it is at 0 all the same.
    const versioned = before.exists
      ? 'balance = :before AND (seq = :seq OR attribute_not_exists(seq))'
      : 'attribute_not_exists(pk)';
    return {
      Update: {
        TableName: tableName,
        Key: { pk: accountKey(account) },
        UpdateExpression: `SET balance = :after, seq = :next, updatedAt = :now, kind = :kind, openedAt = if_not_exists(openedAt, :now)${directClaim ? ', directClaim = :claim' : ''}`,
        ConditionExpression: versioned,
        ExpressionAttributeValues: {
          ...(before.exists ? { ':before': exact(before.balance), ':seq': before.seq } : {}),
          ':after': exact(before.balance + deltaMinor),
          ':next': before.seq + entries,
          ':now': now,
          ':kind': account === ISSUANCE_ACCOUNT ? 'issuance' : 'wallet',
          ...(directClaim ? { ':claim': directClaim } : {}),
        },
      },
    } satisfies TransactItem;
  }

  /** An immutable entry, written once at its account's seq; `posted` for a posted credit's (see `entryItem`). */
  function entryPut(entry: EntryRecord, posted = false) {
    return put(entryItem(entry, posted));
  }

  /** An item written once: the transaction is refused if its key exists. */
  function put(item: Record<string, unknown>, returnOld = false) {
    return {
      Put: {
        TableName: tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(pk)',
        ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
      },
    } satisfies TransactItem;
  }

  return { tableName, readMany, commit, accountUpdate, entryPut, put };
}

/** The side of a movement `self` with `other`: its entry at the account's next seq. */
export function sideEntry(
  movement: Pick<EntryRecord, 'transferId' | 'transferKind' | 'amountMinor' | 'currency' | 'createdAt'>,
  self: { readonly account: string; readonly state: AccountState },
  direction: 'in' | 'out',
  other: {
    readonly account: string;
    readonly seq?: number | undefined;
    readonly address?: string | undefined;
  },
): EntryRecord {
  const delta = direction === 'in' ? BigInt(movement.amountMinor) : -BigInt(movement.amountMinor);
  return {
    ...movement,
    account: self.account,
    seq: self.state.seq + 1,
    direction,
    balanceAfter: exact(self.state.balance + delta),
    counterpartyAccount: other.account,
    ...(other.seq === undefined ? {} : { counterpartySeq: other.seq }),
    ...(other.address === undefined ? {} : { counterpartyAddress: other.address }),
  };
}

function cancellationReasons(
  error: unknown,
): { Code?: string; Item?: Record<string, AttributeValue> }[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  return (error as { CancellationReasons?: { Code?: string; Item?: Record<string, AttributeValue> }[] })
    .CancellationReasons;
}
