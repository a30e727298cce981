import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { type RetryPolicy, UnprocessedKeysError, withRetries } from '../../dynamodb/retry.ts';
import type { WalletTableAccess } from './table-access.ts';

export interface ReadOptions {
  readonly policy?: RetryPolicy | undefined;
  /** The attributes to read, when not all of them. */
  readonly projection?: {
    readonly ProjectionExpression: string;
    readonly ExpressionAttributeNames: Record<string, string>;
  };
}

/**
 * Items by key, strongly consistent, in one BatchGetItem. Keys DynamoDB leaves unprocessed are
 * asked for again after a backoff, within the attempts of any call (then a 503): asked for again at
 * once and without end, they hammered a table already short of capacity past the function's timeout.
 */
export async function readItems(
  { client, tableName }: WalletTableAccess,
  keys: readonly string[],
  { policy, projection }: ReadOptions = {},
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  let pending: { pk: string }[] = [...new Set(keys)].map((pk) => ({ pk }));
  await withRetries(async () => {
    const { Responses, UnprocessedKeys } = await client.send(
      new BatchGetCommand({
        RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true, ...projection } },
      }),
    );
    for (const item of Responses?.[tableName] ?? []) found.set(item.pk as string, item);
    pending = (UnprocessedKeys?.[tableName]?.Keys as { pk: string }[] | undefined) ?? [];
    if (pending.length > 0) throw new UnprocessedKeysError(`${pending.length} keys unprocessed`);
  }, policy);
  return found;
}
