import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import type { WalletTableAccess } from './ledger-commit.ts';
import { addressOfAccount, PENDING_INDEX, PENDING_SHARDS, pendingShardOf } from './ledger-keys.ts';

/** A credit on its way to a wallet, as its owner sees it before it is posted. */
export interface PendingCredit {
  readonly transferId: string;
  readonly fromAddress?: string | undefined;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
}

/**
 * The credits in transit to a hot wallet, read from the `pending` index: one Query per shard, all
 * at once. Only a wallet that was ever marked hot can have any, so readers ask only then.
 */
export function createPendingCredits({ client, tableName }: WalletTableAccess) {
  async function shard(address: string, n: number, limit?: number): Promise<PendingCredit[]> {
    const credits: PendingCredit[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await withRetries(() =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: PENDING_INDEX,
            KeyConditionExpression: 'pendingFor = :k',
            ExpressionAttributeValues: { ':k': pendingShardOf(address, n) },
            ScanIndexForward: false,
            ...(limit === undefined ? {} : { Limit: limit }),
            ExclusiveStartKey: start,
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        credits.push({
          transferId: item.transferId as string,
          fromAddress: addressOfAccount(item.fromAccount as string),
          amountMinor: item.amountMinor as number,
          currency: item.currency as string,
          createdAt: item.createdAt as string,
        });
      }
      start = limit === undefined ? page.LastEvaluatedKey : undefined;
    } while (start);
    return credits;
  }

  const allShards = <T>(run: (n: number) => Promise<T[]>) =>
    Promise.all(Array.from({ length: PENDING_SHARDS }, (_, n) => run(n))).then((parts) => parts.flat());

  /** The newest `limit` credits in transit to `address`, newest first. */
  async function newest(address: string, limit: number): Promise<PendingCredit[]> {
    const credits = await allShards((n) => shard(address, n, limit));
    return credits
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.transferId.localeCompare(a.transferId))
      .slice(0, limit);
  }

  /** The sum of every credit in transit to `address`, in minor units. */
  async function total(address: string): Promise<bigint> {
    const credits = await allShards((n) => shard(address, n));
    return credits.reduce((sum, credit) => sum + BigInt(credit.amountMinor), 0n);
  }

  return { newest, total };
}
