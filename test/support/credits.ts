import { type DynamoDBDocumentClient, paginateQuery, paginateScan } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { createCreditStore } from '#shared/wallet/dynamodb/credit-store.ts';
import {
  HISTORY_INDEX,
  HISTORY_SHARD_INDEX,
  HISTORY_SHARDS,
  historyShardKey,
} from '#shared/wallet/dynamodb/keys.ts';
import type { CreditInTransit } from '#shared/wallet/hot-wallet/credit-batch.ts';
import { makePostCredits } from '#shared/wallet/hot-wallet/post-credits.ts';
import { addressOfAccount, walletAccount } from '#shared/wallet/model/accounts.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';

/** The credits in transit on `tableName` not yet posted, by recipient address (a consistent scan). */
export async function creditsInTransit(
  client: DynamoDBDocumentClient,
  tableName: string,
): Promise<Map<string, CreditInTransit[]>> {
  const byAddress = new Map<string, CreditInTransit[]>();
  const pages = paginateScan(
    { client },
    {
      TableName: tableName,
      ConsistentRead: true,
      FilterExpression: 'kind = :credit AND attribute_not_exists(postedSeq)',
      ExpressionAttributeValues: { ':credit': 'credit' },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const address = addressOfAccount(item.toAccount as string) as string;
      byAddress.set(address, [...(byAddress.get(address) ?? []), item as CreditInTransit]);
    }
  }
  return byAddress;
}

/**
 * Posts every credit in transit on `tableName` with the poster's own use case and repository, as
 * the stream poster would once the load is over: for tests that check the books at rest without
 * running a stream poller. Answers how many it posted.
 */
export async function postCreditsInTransit(endpoint: string, tableName: string): Promise<number> {
  const client = createDocumentClient({ endpoint });
  try {
    const post = makePostCredits({ ledger: createCreditStore({ client, tableName }), clock: systemClock });
    let posted = 0;
    for (const [address, credits] of await creditsInTransit(client, tableName))
      posted += (await post(address, credits)).posted;
    return posted;
  } finally {
    client.destroy();
  }
}

/**
 * The entry items of `address`'s wallet under each index key that can hold them: its `history` key
 * (its own movements) first, then its 16 `history-shards` keys (its posted credits), every page;
 * not the posted batches those keys hold until their completion.
 */
export async function entryItemsByKey(
  client: DynamoDBDocumentClient,
  tableName: string,
  address: string,
): Promise<Map<string, Record<string, unknown>[]>> {
  const account = walletAccount(address);
  const keys: [index: string, keyName: string, key: string][] = [
    [HISTORY_INDEX, 'account', account],
    ...Array.from({ length: HISTORY_SHARDS }, (_, n): [string, string, string] => [
      HISTORY_SHARD_INDEX,
      'historyShard',
      historyShardKey(account, n),
    ]),
  ];
  const byKey = new Map<string, Record<string, unknown>[]>();
  for (const [index, keyName, key] of keys) {
    const items: Record<string, unknown>[] = [];
    const pages = paginateQuery(
      { client },
      {
        TableName: tableName,
        IndexName: index,
        KeyConditionExpression: '#k = :k',
        ExpressionAttributeNames: { '#k': keyName },
        ExpressionAttributeValues: { ':k': key },
      },
    );
    // Not a posted batch, which stands for its credits' entries in its wallet's history until they are written.
    for await (const page of pages) items.push(...(page.Items ?? []).filter((item) => item.kind === 'entry'));
    byKey.set(key, items);
  }
  return byKey;
}
