import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import { eachLimited } from '../../util/each-limited.ts';
import type { PendingCredit } from '../history/ports.ts';
import type { CreditBatch } from '../hot-wallet/credit-batch.ts';
import { addressOfAccount } from '../model/accounts.ts';
import { batchOfItem } from './batch-reader.ts';
import {
  COMPLETING_SHARDS,
  completingShardOf,
  PENDING_INDEX,
  PENDING_SHARDS,
  pendingShardOf,
} from './keys.ts';
import type { WalletTableAccess } from './table-access.ts';

/**
 * The credits in transit to a hot wallet, read from the `pending` index: one Query per shard, all
 * at once. A batch of them stands there for its credits until a posting takes it. Only a wallet that was ever marked hot can have any, so readers ask only then.
 */
export function createPendingCredits({ client, tableName }: WalletTableAccess) {
  /** The items of one shard, newest first or oldest first, `limit` of them or every page. */
  const shard = (address: string, n: number, newestFirst: boolean, limit?: number) =>
    keyItems(pendingShardOf(address, n), newestFirst, limit);

  /** The items of one key of the index, newest first or oldest first, `limit` of them or every page. */
  async function keyItems(key: string, newestFirst: boolean, limit?: number) {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await withRetries(() =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: PENDING_INDEX,
            KeyConditionExpression: 'pendingFor = :k',
            ExpressionAttributeValues: { ':k': key },
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

  /**
   * The newest `limit` credits in transit to `address`, newest first, each once. The index is looked
   * at twice, as the balance does (./pending-balance.ts): a credit batched during a look (out of its
   * shard, its batch into another) may be in both of that look's answers or in neither, and the
   * second look, begun after, finds it as its batch; a batch leaves the index only posted, and the
   * history reads the posted entries after this.
   */
  async function newest(address: string, limit: number): Promise<PendingCredit[]> {
    const byId = new Map<string, PendingCredit>();
    for (let look = 0; look < 2; look++) {
      const items = await allShards((n) => shard(address, n, true, limit));
      for (const credit of items.flatMap(pendingCreditsOf)) byId.set(credit.transferId, credit);
    }
    return [...byId.values()]
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.transferId.localeCompare(a.transferId))
      .slice(0, limit);
  }

  /**
   * Every item the index holds for `address` (credits and batches), as it answers: a Query per shard,
   * each at its own moment, so a credit batched meanwhile may be in both or neither, and on AWS
   * the index trails the table. The balance reconciles them with the table (./pending-balance.ts).
   * `atOnce` Queries in flight at a time, all of them when not given.
   */
  async function items(address: string, atOnce = PENDING_SHARDS): Promise<Record<string, unknown>[]> {
    const parts: Record<string, unknown>[][] = [];
    const shards = Array.from({ length: PENDING_SHARDS }, (_, n) => n);
    await eachLimited(shards, atOnce, async (n) => {
      parts[n] = await shard(address, n, true);
    });
    return parts.flat();
  }

  /** The items of the oldest credits in transit to `address`, up to `perShard` of each shard. */
  const oldestItems = (address: string, perShard: number) =>
    allShards((n) => shard(address, n, false, perShard));

  /**
   * The oldest batches posted and not yet completed, of every wallet: up to `perShard` of each
   * `COMPLETING#` key, one Query each, all at once. A batch completed since the index was written
   * is left out (the index lags the table).
   */
  async function postedUncompleted(perShard: number): Promise<CreditBatch[]> {
    const parts = await Promise.all(
      Array.from({ length: COMPLETING_SHARDS }, (_, n) => keyItems(completingShardOf(n), false, perShard)),
    );
    return parts.flat().flatMap((item) => {
      const batch = batchOfItem(item);
      return batch?.posting && batch.completedAt === undefined ? [batch] : [];
    });
  }

  return { newest, items, oldestItems, postedUncompleted };
}

/** The credits an item of the index stands for: a credit, or those of a batch (./credit-batch.ts). */
const pendingCreditsOf = (item: Record<string, unknown>): PendingCredit[] =>
  (batchOfItem(item)?.credits ?? [item]).map((credit) => ({
    transferId: credit.transferId as string,
    fromAddress: addressOfAccount(credit.fromAccount as string),
    amountMinor: credit.amountMinor as number,
    currency: credit.currency as string,
    createdAt: credit.createdAt as string,
  }));
