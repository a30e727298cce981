import type { AccountState } from '../model/accounts.ts';
import type { BatchPosting, CreditBatch, CreditInTransit } from './credit-batch.ts';

/*
 * The ports of the hot-wallet room: what the router (./router.ts) and the credit poster
 * (./post-credits.ts, ./post-credit-batches.ts) need of the ledger. Declared here, implemented by
 * the adapters in ../dynamodb/ (direct-claim-store.ts, hot-marker-store.ts, credit-store.ts).
 */

/** What claiming a recipient's direct credit answers: the claim it replaced, if any. */
export interface DirectCreditClaim {
  readonly previous?: { readonly claimId: string; readonly claimedAt: number };
}

/** The recipient's direct-credit claim item: of payments arriving together only the first writes the wallet. */
export interface DirectClaimStore {
  /**
   * Claims the direct credit of `address` for the payment `claimId` at `now` (epoch ms), beside the
   * read. Never throws: `undefined` when the claim could not be written.
   */
  claimDirectCredit(address: string, claimId: string, now: number): Promise<DirectCreditClaim | undefined>;
  /**
   * Withdraws the claim `claimId` of a payment that wrote nothing (refused, replayed, busy), unless
   * a later claim replaced it: the claim before it is restored, or with none it is left stale, so
   * that the next payment need not wait for it. Never throws.
   */
  releaseDirectCredit(address: string, claimId: string, before: DirectCreditClaim): Promise<void>;
}

/** A hot wallet's marker. */
export interface HotMarkerStore {
  /**
   * Routes payments to `address` through the clearing account until `until` (epoch ms), and makes
   * reads of its balance count its credits in transit; answers until when the mark is known to
   * hold. Never throws: a mark that could not be written answers 0.
   */
  markHot(address: string, until: number): Promise<number>;
}

/** One posting: the wallet as it stands, and the credits (not yet posted) it takes in, in order. */
export interface PostingPlan {
  readonly address: string;
  readonly wallet: AccountState;
  readonly credits: readonly CreditInTransit[];
  readonly postedAt: string;
  /**
   * One per posting, the same on each of its tries: a credit marked posted by it was posted by
   * this call, even when the answer of the try that did it was lost.
   */
  readonly postingId: string;
}

export type PostingResult =
  | { readonly kind: 'posted' }
  /** The wallet changed since it was read (its owner paid, or another posting): read again. */
  | { readonly kind: 'wallet-moved' }
  /** A credit was posted meanwhile (a redelivered batch, another poller): read again. */
  | { readonly kind: 'credit-taken' };

/**
 * Who holds a wallet's posting lease: one call (`call`), of one poster (`poster`, its container).
 * A lease is a call's, so that two calls of one container never both hold it; the poster tells
 * whether anyone else has posted to the wallet since this container last did.
 */
export interface LeaseHolder {
  readonly poster: string;
  readonly call: string;
}

/** The ledger as the credit poster needs it; implemented by ../dynamodb/credit-store.ts. */
export interface CreditStore extends BatchStore, HotMarkerStore {
  /** Posts credits no batch holds, in one transaction. */
  post(plan: PostingPlan): Promise<PostingResult>;
  /**
   * Takes the wallet's posting lease for `holder` until `until`, if it is free, lapsed at `now`,
   * or `holder`'s already; `othersPosted` when another poster had it since this one, `othersWait`
   * when it was refused and the lease already says that pollers wait.
   */
  takeLease(
    address: string,
    holder: LeaseHolder,
    now: number,
    until: number,
  ): Promise<{ taken: boolean; othersPosted: boolean; othersWait: boolean }>;
  /** Moves the end of `holder`'s lease to `until`, keeping whether others wait; nothing if it is not `holder`'s. */
  renewLease(address: string, holder: LeaseHolder, until: number): Promise<void>;
  /** Tells the lease's holder that credits wait for it; `false` when no lease holds at `now`. */
  waitFor(address: string, now: number): Promise<boolean>;
  /**
   * Frees `holder`'s lease, unless others wait (`force`: even then): then it clears their signal,
   * keeps the lease and answers `others-waiting`. One write when forced.
   */
  releaseLease(address: string, holder: LeaseHolder, force: boolean): Promise<'released' | 'others-waiting'>;
  /**
   * The oldest credits in transit to the wallet (a few hundred), whichever poller was handed them:
   * those a batch holds, with their batch.
   */
  oldestCredits(address: string): Promise<CreditInTransit[]>;
}

/** One posting of whole batches: the wallet as it stands, and the batches (not yet posted) it takes in, in order. */
export interface BatchPostingPlan {
  readonly address: string;
  readonly wallet: AccountState;
  readonly batches: readonly CreditBatch[];
  readonly postedAt: string;
}

export type BatchPostingResult =
  /** Where each batch's credits went in the wallet, in the plan's order. */
  | { readonly kind: 'posted'; readonly postings: readonly BatchPosting[] }
  /** The wallet changed since it was read: read again. */
  | { readonly kind: 'wallet-moved' }
  /** A batch was posted meanwhile (another poller): read again. */
  | { readonly kind: 'batch-taken' };

/** The ledger as the two levels of a posting need it (./post-credit-batches.ts); implemented by ../dynamodb/credit-store.ts. */
export interface BatchStore {
  /** The wallet and those of `transferIds` whose credit exists, strongly consistent, in one read. */
  read(
    address: string,
    transferIds: readonly string[],
  ): Promise<{ wallet: AccountState; credits: CreditInTransit[] }>;
  /** Claims the batch's credits for it, unless one is batched or posted already. */
  batch(batch: CreditBatch, batchedAt: string): Promise<'batched' | 'credit-taken'>;
  postBatches(plan: BatchPostingPlan): Promise<BatchPostingResult>;
  /**
   * Writes a posted batch's entries and marks its credits posted, by `completer`: `completed` when
   * this completer's write did it (its answer lost or not), `already` when another's did, `busy`
   * when another transaction held one of its items (try again).
   */
  complete(
    batch: CreditBatch,
    completedAt: string,
    completer: string,
  ): Promise<'completed' | 'already' | 'busy'>;
  /** Those of the batches that exist, strongly consistent. */
  readBatches(batchIds: readonly string[]): Promise<CreditBatch[]>;
}

/**
 * What the sweep of batches posted and not completed needs of the ledger (./sweep-batches.ts);
 * implemented by ../dynamodb/credit-store.ts (its query by ../dynamodb/pending-index.ts).
 */
export interface BatchSweepStore extends Pick<BatchStore, 'complete'> {
  /** The oldest batches posted and not yet completed, of every wallet: up to `perShard` of each shard. */
  postedUncompleted(perShard: number): Promise<CreditBatch[]>;
}
