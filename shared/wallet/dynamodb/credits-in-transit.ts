import type { RetryPolicy } from '../../dynamodb/retry.ts';
import { readItems } from './consistent-read.ts';
import { batchKey, creditKey } from './keys.ts';
import type { WalletTableAccess } from './table-access.ts';

/**
 * Which of these transfers' credits (`found`, by key) are still in transit: one missing, or not
 * posted and in no batch a posting has taken into its wallet. Between a batch's posting and its
 * completion its credits are not marked posted yet, but their money is the recipient's, which
 * it may spend: completed. One more BatchGetItem, only when an unposted credit is in a batch.
 * Every reader of a transfer's status asks this (the history, a lookup, a replayed key), so that
 * none says `pending` once another says `completed`.
 */
export async function stillInTransit(
  access: WalletTableAccess,
  transferIds: readonly string[],
  found: ReadonlyMap<string, Record<string, unknown>>,
  /** The batches' read's retries: fewer where a request's time is counted (a replay's). */
  batchReadPolicy?: RetryPolicy,
): Promise<Set<string>> {
  const batchOf = (id: string) => {
    const credit = found.get(creditKey(id));
    return credit?.postedSeq === undefined && typeof credit?.batchId === 'string'
      ? credit.batchId
      : undefined;
  };
  const batchKeys = transferIds.flatMap((id) => {
    const batchId = batchOf(id);
    return batchId === undefined ? [] : [batchKey(batchId)];
  });
  const batches =
    batchKeys.length > 0 ? await readItems(access, batchKeys, { policy: batchReadPolicy }) : new Map();
  return new Set(
    transferIds.filter((id) => {
      if (found.get(creditKey(id))?.postedSeq !== undefined) return false;
      const batchId = batchOf(id);
      return batchId === undefined || batches.get(batchKey(batchId))?.firstSeq === undefined;
    }),
  );
}
