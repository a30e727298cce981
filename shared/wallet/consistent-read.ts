import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import type { WalletTableAccess } from './ledger-commit.ts';

/** Items by key, strongly consistent, in one BatchGetItem (plus one per unprocessed remainder). */
export async function readItems(
  { client, tableName }: WalletTableAccess,
  keys: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  let pending: { pk: string }[] = [...new Set(keys)].map((pk) => ({ pk }));
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
