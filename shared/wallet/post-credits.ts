import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TemporarilyUnavailableError } from '../errors.ts';
import type { AccountState } from './ledger-commit.ts';
import { busy, retryMovement } from './movement-retry.ts';
import type { Clock } from './ports.ts';
import { recentEntries } from './recent-entries.ts';
import { HOT_FOR_MS } from './send-money.ts';

/** A credit in transit to a hot wallet, as the payer's transaction wrote it. */
export interface CreditInTransit {
  readonly transferId: string;
  /** The paying wallet's account and its entry of this payment. */
  readonly fromAccount: string;
  readonly fromSeq: number;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  /** The recipient's entry, once posted. */
  readonly postedSeq?: number | undefined;
}

/** One posting: the wallet as it stands, and the credits (not yet posted) it takes in, in order. */
export interface PostingPlan {
  readonly address: string;
  readonly wallet: AccountState;
  readonly credits: readonly CreditInTransit[];
  readonly postedAt: string;
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

/** The ledger as the credit poster needs it: declared here, implemented by ./credit-ledger.ts. */
export interface CreditLedger {
  /** The wallet and those of `transferIds` whose credit exists, strongly consistent, in one read. */
  read(
    address: string,
    transferIds: readonly string[],
  ): Promise<{ wallet: AccountState; credits: CreditInTransit[] }>;
  post(plan: PostingPlan): Promise<PostingResult>;
  /** Keeps `address` hot while its credits arrive: `TransferLedger.markHot`. */
  markHot(address: string, until: number): Promise<number>;
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
  /** The oldest credits in transit to the wallet (a few hundred), whichever poller was handed them. */
  oldestCredits(address: string): Promise<CreditInTransit[]>;
}

/**
 * The most credits one posting takes: the wallet, then an entry and the credit's mark per credit,
 * in one transaction of at most 100 items.
 */
export const MAX_CREDITS_PER_POSTING = 49;

/** How long a posting may keep trying before the batch is handed back to be delivered again. */
export const POSTING_DEADLINE_MS = 20_000;

/**
 * How long one call may go on starting postings: a wallet's credits are posted one batch after
 * another, and what is left past this is handed back to be delivered again. No write of a posting
 * starts later than this and {@link POSTING_DEADLINE_MS} after the call began; that write, the
 * lease's forced release and the wallet's hot mark follow, one call each: all of it inside the
 * poster's timeout (infra/credit-poster-settings.ts), so that a slow DynamoDB ends in records handed
 * back, not in a timed-out invocation (test/infra/dynamodb-time-budget.test.ts).
 */
export const POSTING_CALL_MS = 15_000;

/** How many wallets' states a poster keeps between its calls (the hot ones: a few). */
const KNOWN_WALLETS = 1_000;

/**
 * How long a posting lease holds unless its holder renews it (before each posting, once half of it
 * is gone) or lets go: a holder that died stops the wallet's other pollers for at most this long.
 */
const POSTING_LEASE_MS = 5_000;

/** How long a poller that found the lease taken waits before it looks at its credits again. */
const LEASE_WAIT_MS = 250;

/**
 * Posts credits in transit to one wallet, in batches: each batch is ONE transaction that writes
 * the wallet once (balance + the batch's sum, seq + its count), an entry per credit with its exact
 * running balance at seq + 1, + 2, …, and marks each credit posted on condition that it was not,
 * so a redelivered or concurrent batch posts nothing twice. Credits go in the order they were paid.
 *
 * One poller posts to a wallet at a time: it holds the wallet's posting lease, an item of its own.
 * A hot wallet's credits reach every shard of the stream, so without it as many pollers as shards
 * would post to the wallet at once, and all but one of them would be refused on its item, again
 * and again (docs/decisions/hot-wallets.md). A poller that finds the lease taken says it waits, and
 * the holder, before it lets go, posts the credits in transit to the wallet, those of the waiting
 * pollers among them, in large batches. The waiting poller reads its credits again: those posted
 * are done, and for the rest it takes the lease when it is free. The lease only saves attempts:
 * the transaction's conditions keep each posting exact whoever holds it.
 *
 * A call that stops before its credits are all posted (out of time, or DynamoDB failing) throws;
 * once it held the lease, a {@link PostingCutShort}, which counts the credits it did post.
 *
 * The credits come as the stream announced them, and the wallet as the poster's last posting to it
 * left it: a wallet that only this poster writes (a hot one, while credits arrive) is posted to in
 * one round trip, without a read. Should either have moved on (its owner paid, another holder
 * posted, a batch was delivered again), the transaction's conditions refuse it, and the batch is
 * read (the wallet, and which credits are still due) and built again. The wallet stays hot while
 * credits arrive.
 */
export function makePostCredits({ ledger, clock }: { ledger: CreditLedger; clock: Clock }) {
  /** Each wallet as this poster's last posting to it left it. */
  const known = recentEntries<AccountState>(KNOWN_WALLETS);
  /** This poster (one per container). */
  const poster = randomUUID();

  /** One call's work on one wallet, and its lease. */
  interface Call {
    readonly address: string;
    readonly holder: LeaseHolder;
    readonly started: number;
    leaseUntil: number;
    /** The credits it posted, its own and others'. */
    readonly posted: Set<string>;
  }

  const outOfTime = (call: Call) => Date.now() - call.started > POSTING_CALL_MS;

  /** Posts `credits` in batches, adding each to `call.posted` as its batch commits. */
  async function postBatches(call: Call, credits: readonly CreditInTransit[]): Promise<void> {
    const { address } = call;
    for (let start = 0; start < credits.length; start += MAX_CREDITS_PER_POSTING) {
      if (outOfTime(call)) throw busy('Out of time for this batch; its credits are delivered again');
      if (call.leaseUntil - clock.now() < POSTING_LEASE_MS / 2) {
        // A lease lost meanwhile is no danger: every posting is conditional.
        call.leaseUntil = clock.now() + POSTING_LEASE_MS;
        await ledger.renewLease(address, call.holder, call.leaseUntil);
      }
      const batch = credits.slice(start, start + MAX_CREDITS_PER_POSTING);
      const done = await retryMovement<readonly CreditInTransit[]>(
        {
          // Bounded by the call's start too, so that neither a renewal nor a late batch pushes
          // the last write past the poster's timeout.
          at: Math.min(Date.now(), call.started + POSTING_CALL_MS) + POSTING_DEADLINE_MS,
          message: 'The wallet is busy; its credits are delivered again',
        },
        async (_attempt, beforeWrite) => {
          const remembered = known.get(address);
          known.delete(address);
          try {
            const { wallet, due } = remembered
              ? { wallet: remembered, due: batch }
              : await readDue(ledger, address, batch);
            if (due.length === 0) return { done: [] };
            beforeWrite();
            const result = await ledger.post({
              address,
              wallet,
              credits: due,
              postedAt: new Date(clock.now()).toISOString(),
            });
            if (result.kind !== 'posted') return { again: remembered ? 'now' : 'after-pause' };
            const sum = due.reduce((total, credit) => total + BigInt(credit.amountMinor), 0n);
            known.set(address, { exists: true, balance: wallet.balance + sum, seq: wallet.seq + due.length });
            return { done: due };
          } catch (error) {
            // Throttled (or unanswered) past one call's tries: waited out within the deadline, not
            // handed back to the stream, whose bounded retries one short episode would use up. The
            // next attempt reads again, and a posting that did commit is not posted twice.
            if (error instanceof TemporarilyUnavailableError) return { again: 'after-pause' };
            throw error;
          }
        },
      );
      for (const credit of done) call.posted.add(credit.transferId);
    }
  }

  /**
   * Once the call's own credits are posted: while others wait for the lease and time is left, posts
   * the oldest credits in transit to the wallet, theirs among them. Whatever goes wrong here, the
   * call's own credits are posted: it stops, and the lease is let go.
   */
  async function postForOthers(call: Call): Promise<'released' | 'holding'> {
    try {
      while (!outOfTime(call)) {
        if ((await ledger.releaseLease(call.address, call.holder, false)) === 'released') return 'released';
        if (outOfTime(call)) break;
        // The index may still list what this call has just posted; when it shows nothing else
        // (it lags), the waiting pollers post their own once the lease is free.
        const others = (await ledger.oldestCredits(call.address)).filter(
          (c) => !call.posted.has(c.transferId),
        );
        if (others.length === 0) break;
        await postBatches(call, others.sort(paidOrder));
      }
    } catch {
      // Out of time, or DynamoDB failing: the others' pollers post their credits.
    }
    return 'holding';
  }

  /** Posts `credits` holding the lease, then others' while they wait; lets go of the lease in any case. */
  async function postHolding(call: Call, credits: readonly CreditInTransit[]): Promise<void> {
    let lease: 'released' | 'holding' = 'holding';
    try {
      await postBatches(call, credits);
      lease = await postForOthers(call);
    } catch (error) {
      throw new PostingCutShort(call.posted.size, error);
    } finally {
      // Out of time, or failed: free it for the others now (a lease also lapses by itself).
      if (lease === 'holding')
        await ledger.releaseLease(call.address, call.holder, true).catch(() => undefined);
    }
  }

  return async (address: string, announced: readonly CreditInTransit[]): Promise<{ posted: number }> => {
    let credits = [...new Map(announced.map((credit) => [credit.transferId, credit])).values()].sort(
      paidOrder,
    );
    const call: Call = {
      address,
      holder: { poster, call: randomUUID() },
      started: Date.now(),
      leaseUntil: 0,
      posted: new Set(),
    };
    while (credits.length > 0) {
      const until = clock.now() + POSTING_LEASE_MS;
      const lease = await ledger.takeLease(address, call.holder, clock.now(), until);
      if (lease.taken) {
        if (lease.othersPosted) known.delete(address);
        call.leaseUntil = until;
        await postHolding(call, credits);
        break;
      }
      if (outOfTime(call)) throw busy('Another poller holds the wallet; its credits are delivered again');
      // Another poller posts to the wallet: it will post these too, or let go of the lease.
      if (lease.othersWait || (await ledger.waitFor(address, clock.now())))
        await sleep(LEASE_WAIT_MS * (0.5 + Math.random()));
      credits = await stillDue(ledger, address, credits);
    }
    if (call.posted.size > 0) await ledger.markHot(address, clock.now() + HOT_FOR_MS);
    return { posted: call.posted.size };
  };
}

/**
 * A call that stopped before it had posted all its credits: they are delivered again, and those it
 * did post (`posted`, counted in the poster's metric) are skipped then. `cause` says why it stopped.
 */
export class PostingCutShort extends Error {
  override readonly name = 'PostingCutShort';
  readonly posted: number;
  constructor(posted: number, cause: unknown) {
    super('Posting stopped before all its credits were posted; they are delivered again', { cause });
    this.posted = posted;
  }
}

/** The order credits were paid in: the order they are posted in. */
const paidOrder = (a: CreditInTransit, b: CreditInTransit) =>
  a.createdAt.localeCompare(b.createdAt) || a.transferId.localeCompare(b.transferId);

/** Those of `credits` still to post, read a posting's worth at a time (a read holds 100 keys at most). */
async function stillDue(ledger: CreditLedger, address: string, credits: readonly CreditInTransit[]) {
  const parts: Promise<{ due: CreditInTransit[] }>[] = [];
  for (let start = 0; start < credits.length; start += MAX_CREDITS_PER_POSTING)
    parts.push(readDue(ledger, address, credits.slice(start, start + MAX_CREDITS_PER_POSTING)));
  return (await Promise.all(parts)).flatMap((part) => part.due);
}

/** The wallet as it is, and those of `batch` still to post (a credit posted meanwhile, or not found, is skipped). */
async function readDue(ledger: CreditLedger, address: string, batch: readonly CreditInTransit[]) {
  const { wallet, credits } = await ledger.read(
    address,
    batch.map((credit) => credit.transferId),
  );
  return { wallet, due: credits.filter((credit) => credit.postedSeq === undefined).sort(paidOrder) };
}
