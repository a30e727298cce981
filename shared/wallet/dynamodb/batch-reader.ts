import type { BatchedCredit, CreditBatch } from '../hot-wallet/credit-batch.ts';
import { addressOfAccount } from '../model/accounts.ts';

/* Reading a batch from its item: a file of its own, apart from ./batch-items.ts (which writes
   entries through the commit routine), so that the balance's readers carry no writer
   (test/infra/bundling.test.ts). */

/** A batch as read from its item; `undefined` for an item that is not one. */
export function batchOfItem(item: Record<string, unknown> | undefined): CreditBatch | undefined {
  if (item?.kind !== 'batch' || typeof item.batchId !== 'string' || !Array.isArray(item.credits)) return;
  const address = addressOfAccount(String(item.toAccount ?? ''));
  if (address === undefined) return;
  const posted = typeof item.firstSeq === 'number' && typeof item.postedAt === 'string';
  return {
    batchId: item.batchId,
    address,
    credits: item.credits as BatchedCredit[],
    posting: posted
      ? {
          firstSeq: item.firstSeq as number,
          balanceBefore: BigInt(item.balanceBefore as number | bigint),
          postedAt: item.postedAt as string,
        }
      : undefined,
    completedAt: typeof item.completedAt === 'string' ? item.completedAt : undefined,
  };
}
