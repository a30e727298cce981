/*
 * What a batch of credits in transit is, and how to read one: code that writes none, so the balance
 * reads batches in the pending index without carrying the ledger's writers
 * (./credit-batch-items.ts writes them).
 */

/** A credit in transit as a batch lists it: all its entry needs. */
export interface BatchedCredit {
  readonly transferId: string;
  /** The paying wallet's account and its entry of this payment. */
  readonly fromAccount: string;
  readonly fromSeq: number;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
}

/** A credit in transit to a hot wallet, as the payer's transaction wrote it and the poster marks it. */
export interface CreditInTransit extends BatchedCredit {
  /** The recipient's entry, once posted. */
  readonly postedSeq?: number | undefined;
  /** The batch that holds it, once one does: it is posted with that batch, never on its own. */
  readonly batchId?: string | undefined;
  /** The one-level posting that posted it (`PostingPlan.postingId`), once posted on its own. */
  readonly postedBy?: string | undefined;
}

/** Where a posted batch's credits go in its wallet: set by the posting that took it. */
export interface BatchPosting {
  /** The wallet's seq of the batch's first credit: the others follow, one each. */
  readonly firstSeq: number;
  /** The wallet's balance just before that first credit. */
  readonly balanceBefore: bigint;
  readonly postedAt: string;
}

/**
 * Up to MAX_CREDITS_PER_BATCH credits in transit to one wallet, claimed together so that a posting
 * takes them all in one item: the first level of a hot wallet's postings
 * (docs/decisions/hot-wallets.md, "Two levels"). Still the clearing account's money until posted.
 */
export interface CreditBatch {
  readonly batchId: string;
  readonly address: string;
  /** In the order they are posted in. */
  readonly credits: readonly BatchedCredit[];
  readonly posting?: BatchPosting | undefined;
  /** When its entries were written and its credits marked posted: the batch is then done. */
  readonly completedAt?: string | undefined;
}

/**
 * The most credits one batch holds: its completing transaction writes an entry and a mark per credit
 * and the batch's own mark, 2 × 49 + 1 = 99 items of a transaction's 100.
 */
export const MAX_CREDITS_PER_BATCH = 49;

/** The sum of a batch's credits, exactly. */
export const batchSum = (batch: Pick<CreditBatch, 'credits'>): bigint =>
  batch.credits.reduce((sum, credit) => sum + BigInt(credit.amountMinor), 0n);

/** A credit as a batch lists it: all its entry needs, and nothing of its state. */
export const listingOf = ({
  transferId,
  fromAccount,
  fromSeq,
  amountMinor,
  currency,
  createdAt,
}: BatchedCredit): BatchedCredit => ({ transferId, fromAccount, fromSeq, amountMinor, currency, createdAt });
