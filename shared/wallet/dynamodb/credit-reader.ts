import type { CreditInTransit } from '../hot-wallet/credit-batch.ts';
import { addressOfAccount } from '../model/accounts.ts';

/* Reading a credit in transit from its item: a file of its own, apart from ./credit-store.ts (which
   writes credits, batches and postings), as ./batch-reader.ts is for batches. */

/**
 * A credit in transit as its item holds it (read from the table, or from the stream's image of its
 * insert), with its recipient's address; `undefined` for an item without its transfer, accounts,
 * amount or time.
 */
export function creditOfItem(
  item: Record<string, unknown>,
): { address: string; credit: CreditInTransit } | undefined {
  const address = addressOfAccount(String(item.toAccount ?? ''));
  const { transferId, fromAccount, fromSeq, amountMinor, currency, createdAt, postedSeq, batchId, postedBy } =
    item;
  const texts = [transferId, fromAccount, currency, createdAt];
  if (address === undefined || !texts.every((value) => typeof value === 'string' && value !== '')) return;
  if (!Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(amountMinor)) return;
  return {
    address,
    credit: {
      transferId,
      fromAccount,
      fromSeq,
      amountMinor,
      currency,
      createdAt,
      postedSeq: postedSeq as number | undefined,
      batchId: batchId as string | undefined,
      ...(typeof postedBy === 'string' ? { postedBy } : {}),
    } as CreditInTransit,
  };
}
