import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RetryPolicy } from '../../dynamodb/retry.ts';
import { readItems } from '../dynamodb/consistent-read.ts';
import { auditedProjection, type Item } from './records.ts';

/**
 * A scan of a whole table runs for minutes: throttling or a dropped connection on one of its
 * thousands of calls is to be waited out, not to fail the run (and page someone).
 */
export const AUDIT_RETRY_POLICY: RetryPolicy = { attempts: 8, baseDelayMs: 50, maxDelayMs: 2_000 };

const BATCH = 100;

/**
 * Items read by key after the scan, strongly consistent, in BatchGetItems of 100 keys: the audit
 * reads an item again before it calls anything missing or broken, since a Scan is no snapshot.
 * Keys DynamoDB leaves unprocessed are waited out as a throttled call is, within the policy's
 * attempts (`readItems`).
 */
export function createKeyReader(client: DynamoDBDocumentClient, tableName: string) {
  let fetched = 0;

  async function readBatch(keys: readonly string[], found: Map<string, Item>): Promise<void> {
    const items = await readItems({ client, tableName }, keys, {
      policy: AUDIT_RETRY_POLICY,
      projection: auditedProjection,
    });
    for (const [key, item] of items) found.set(key, item);
    fetched += items.size;
  }

  return {
    /** The items of `keys` that exist, by key; keys may repeat and come from a generator. */
    async read(keys: Iterable<string>): Promise<Map<string, Item>> {
      const found = new Map<string, Item>();
      let batch = new Set<string>();
      for (const key of keys) {
        if (found.has(key)) continue;
        batch.add(key);
        if (batch.size === BATCH) {
          await readBatch([...batch], found);
          batch = new Set();
        }
      }
      if (batch.size > 0) await readBatch([...batch], found);
      return found;
    },
    /** How many items were read by key so far. */
    get fetched(): number {
      return fetched;
    },
  };
}

export type KeyReader = ReturnType<typeof createKeyReader>;
