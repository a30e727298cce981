import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { type EntryRecord, HISTORY_INDEX, transferKey } from './ledger-keys.ts';
import type { WalletTableAccess } from './ledger-writes.ts';

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
}

/** The reads of an account's history and of one movement. */
export type HistoryRepository = ReturnType<typeof createHistoryRepository>;

export function createHistoryRepository({ client, tableName }: WalletTableAccess) {
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

  /** One movement by id, strongly consistent: ONE GetItem. */
  async function movement(transferId: string): Promise<MovementRecord | undefined> {
    const { Item } = await withRetries(() =>
      client.send(
        new GetCommand({ TableName: tableName, Key: { pk: transferKey(transferId) }, ConsistentRead: true }),
      ),
    );
    if (!Item) return undefined;
    return {
      ...(Item as MovementRecord),
      transferKind: (Item.transferKind as 'deposit' | undefined) ?? 'transfer',
    };
  }

  return { entries, movement };
}
