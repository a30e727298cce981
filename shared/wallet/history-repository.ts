import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { readItems } from './consistent-read.ts';
import type { WalletTableAccess } from './ledger-commit.ts';
import { creditKey, type EntryRecord, HISTORY_INDEX, inboundKey, transferKey } from './ledger-keys.ts';
import { createPendingCredits, type PendingCredit } from './pending-credits.ts';

/** A movement as stored: a transfer between two wallets, or a deposit from the issuance account. */
export interface MovementRecord {
  readonly transferId: string;
  readonly transferKind: 'transfer' | 'deposit';
  /** Absent for a deposit: the money came from outside. */
  readonly fromAddress?: string;
  readonly toAddress: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  /** `pending` while its credit is in transit to a hot wallet. */
  readonly status: 'pending' | 'completed';
}

/** The reads of an account's history and of one movement. */
export type HistoryRepository = ReturnType<typeof createHistoryRepository>;

export function createHistoryRepository(access: WalletTableAccess) {
  const { client, tableName } = access;
  const pending = createPendingCredits(access);

  /**
   * Up to `limit` entries of `account`, newest first, from `seq` `atOrBelow` down when given:
   * ONE Query of the history index.
   */
  async function entries(account: string, limit: number, atOrBelow?: number): Promise<EntryRecord[]> {
    const { Items } = await withRetries(() =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: HISTORY_INDEX,
          KeyConditionExpression: atOrBelow === undefined ? 'account = :a' : 'account = :a AND seq <= :s',
          ExpressionAttributeValues: {
            ':a': account,
            ...(atOrBelow === undefined ? {} : { ':s': atOrBelow }),
          },
          ScanIndexForward: false,
          Limit: limit,
        }),
      ),
    );
    return (Items ?? []) as EntryRecord[];
  }

  /** One movement by id and its credit's state, strongly consistent: ONE BatchGetItem. */
  async function movement(transferId: string): Promise<MovementRecord | undefined> {
    const found = await readItems(access, [transferKey(transferId), creditKey(transferId)]);
    const item = found.get(transferKey(transferId));
    if (!item) return undefined;
    const inTransit = item.via === 'clearing' && found.get(creditKey(transferId))?.postedSeq === undefined;
    return {
      ...(item as unknown as MovementRecord),
      transferKind: (item.transferKind as 'deposit' | undefined) ?? 'transfer',
      status: inTransit ? 'pending' : 'completed',
    };
  }

  /** Which of these transfers' credits are still in transit: ONE BatchGetItem (none for no ids). */
  async function creditsInTransit(transferIds: readonly string[]): Promise<Set<string>> {
    if (transferIds.length === 0) return new Set();
    const found = await readItems(access, transferIds.map(creditKey));
    return new Set(transferIds.filter((id) => found.get(creditKey(id))?.postedSeq === undefined));
  }

  /**
   * The newest `limit` credits in transit to `address`: none unless the wallet was ever marked hot
   * (one read of its marker), else one Query per shard of the `pending` index.
   */
  async function pendingCredits(address: string, limit: number): Promise<PendingCredit[]> {
    const marker = await readItems(access, [inboundKey(address)]);
    return marker.size === 0 ? [] : pending.newest(address, limit);
  }

  return { entries, movement, creditsInTransit, pendingCredits };
}
