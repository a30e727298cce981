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
  /** The items of one shard, newest first or oldest first, `limit` of them or every page. */
  async function shard(address: string, n: number, newestFirst: boolean, limit?: number) {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await withRetries(() =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: PENDING_INDEX,
            KeyConditionExpression: 'pendingFor = :k',
            ExpressionAttributeValues: { ':k': pendingShardOf(address, n) },
            ScanIndexForward: !newestFirst,
            ...(limit === undefined ? {} : { Limit: limit }),
            ExclusiveStartKey: start,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      start = limit === undefined ? page.LastEvaluatedKey : undefined;
    } while (start);
    return items;
  }

  const allShards = (run: (n: number) => Promise<Record<string, unknown>[]>) =>
    Promise.all(Array.from({ length: PENDING_SHARDS }, (_, n) => run(n))).then((parts) => parts.flat());

  /** The newest `limit` credits in transit to `address`, newest first. */
  async function newest(address: string, limit: number): Promise<PendingCredit[]> {
    const items = await allShards((n) => shard(address, n, true, limit));
    return items
      .map(pendingCreditOf)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.transferId.localeCompare(a.transferId))
      .slice(0, limit);
  }

  /** The sum of every credit in transit to `address`, in minor units. */
  async function total(address: string): Promise<bigint> {
    const items = await allShards((n) => shard(address, n, true));
    return items.reduce((sum, item) => sum + BigInt(item.amountMinor as number), 0n);
  }

  /** The items of the oldest credits in transit to `address`, up to `perShard` of each shard. */
  const oldestItems = (address: string, perShard: number) =>
    allShards((n) => shard(address, n, false, perShard));

  return { newest, total, oldestItems };
}

const pendingCreditOf = (item: Record<string, unknown>): PendingCredit => ({
  transferId: item.transferId as string,
  fromAddress: addressOfAccount(item.fromAccount as string),
  amountMinor: item.amountMinor as number,
  currency: item.currency as string,
  createdAt: item.createdAt as string,
});
