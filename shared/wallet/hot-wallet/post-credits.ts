import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { recentEntries } from '../../util/recent-entries.ts';
import type { AccountState } from '../model/accounts.ts';
import { busy, patiently, retryMovement } from '../model/movement-retry.ts';
import type { Clock } from '../model/ports.ts';
import type { CreditInTransit } from './credit-batch.ts';
import type { BatchStore, CreditStore, LeaseHolder } from './ports.ts';
import { makeTwoLevelPosting } from './post-credit-batches.ts';
import { HOT_FOR_MS } from './router.ts';

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
 * Posts credits in transit to one wallet. Up to MAX_CREDITS_PER_POSTING, none of them batched, in
 * ONE transaction that writes the wallet once (balance + their sum, seq + their count), an entry
 * per credit with its exact running balance at seq + 1, + 2, …, and marks each credit posted on
 * condition that it was not and that no batch holds it, so a redelivered or concurrent call posts
 * nothing twice. More go on two levels (./post-credit-batches.ts): batched in parallel, then taken
 * into the wallet up to 99 batches a transaction. Credits go in the order they were paid, a batch
 * after another.
 *
 * One poller posts to a wallet at a time: it holds the wallet's posting lease, an item of its own.
 * A hot wallet's credits reach every shard of the stream, so without it as many pollers as shards
 * would post to the wallet at once, and all but one of them would be refused on its item, again
 * and again (docs/decisions/hot-wallets.md). A poller that finds the lease taken says it waits and
 * batches its credits, and the holder, before it lets go, posts the credits in transit to the
 * wallet, those of the waiting pollers among them, whole batches at a time. The waiting poller
 * reads its credits again: those posted are done, and for the rest it takes the lease when it is
 * free. The lease only saves attempts: the transaction's conditions keep each posting exact
 * whoever holds it.
 *
 * A call that stops before its credits are all posted (out of time, or DynamoDB failing) throws;
 * once it held the lease, a {@link PostingCutShort}, which counts the credits it did post.
 *
 * The credits come as the stream announced them, and the wallet as the poster's last posting to it
 * left it: a wallet that only this poster writes (a hot one, while credits arrive) is posted to in
 * one round trip, without a read. Should either have moved on (its owner paid, another holder
 * posted, credits were delivered again), the transaction's conditions refuse it, and the posting
 * is read (the wallet, and which credits or batches are still due) and built again. The wallet
 * stays hot while credits arrive.
 */
export function makePostCredits({ ledger, clock }: { ledger: CreditStore; clock: Clock }) {
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

  const deadline = (call: Call, message: string) => ({
    // Bounded by the call's start too, so that neither a renewal nor a late batch pushes the last
    // write past the poster's timeout.
    at: Math.min(Date.now(), call.started + POSTING_CALL_MS) + POSTING_DEADLINE_MS,
    message,
  });

  /** Before each posting: out of time, the rest is delivered again; the lease renewed once half of it is gone. */
  async function beforePosting(call: Call): Promise<void> {
    if (outOfTime(call)) throw busy('Out of time for this batch; its credits are delivered again');
    if (call.leaseUntil - clock.now() < POSTING_LEASE_MS / 2) {
      // A lease lost meanwhile is no danger: every posting is conditional.
      call.leaseUntil = clock.now() + POSTING_LEASE_MS;
      await ledger.renewLease(call.address, call.holder, call.leaseUntil);
    }
  }

  const twoLevel = makeTwoLevelPosting({ ledger, clock, known, deadline, beforePosting });

  /**
   * Posts `credits` (not posted when read), adding each to `call.posted` once it is: in one
   * transaction when no batch holds any and one posting takes them all, as a quiet wallet's are,
   * else on two levels (./post-credit-batches.ts), which take thousands a posting.
   */
  async function postDue(call: Call, credits: readonly CreditInTransit[]): Promise<void> {
    let rest = credits;
    if (credits.length <= MAX_CREDITS_PER_POSTING && credits.every((c) => c.batchId === undefined)) {
      rest = await postDirect(call, credits);
    }
    if (rest.length > 0) await twoLevel.post(call, rest);
  }

  /** Posts `credits` in one transaction; answers those of them a batch took meanwhile, still to post with it. */
  async function postDirect(call: Call, credits: readonly CreditInTransit[]): Promise<CreditInTransit[]> {
    const { address } = call;
    await beforePosting(call);
    const postingId = randomUUID();
    type Outcome = { done: readonly CreditInTransit[]; batched: CreditInTransit[] };
    const { done, batched } = await retryMovement<Outcome>(
      deadline(call, 'The wallet is busy; its credits are delivered again'),
      (_attempt, beforeWrite) =>
        patiently<Outcome>(async () => {
          const remembered = known.get(address);
          known.delete(address);
          const { wallet, due, batched, postedBy }: Awaited<ReturnType<typeof readDue>> = remembered
            ? { wallet: remembered, due: [...credits], batched: [], postedBy: [] }
            : await readDue(ledger, address, credits);
          // A try whose answers were all lost committed: its credits are this call's.
          const mine = postedBy.filter((credit) => credit.postedBy === postingId);
          if (due.length === 0) return { done: { done: mine, batched } };
          beforeWrite();
          const result = await ledger.post({
            address,
            wallet,
            credits: due,
            postedAt: new Date(clock.now()).toISOString(),
            postingId,
          });
          if (result.kind !== 'posted') return { again: remembered ? 'now' : 'after-pause' };
          const sum = due.reduce((total, credit) => total + BigInt(credit.amountMinor), 0n);
          known.set(address, { exists: true, balance: wallet.balance + sum, seq: wallet.seq + due.length });
          return { done: { done: [...mine, ...due], batched } };
        }),
    );
    for (const credit of done) call.posted.add(credit.transferId);
    return batched;
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
        await postDue(call, others.sort(paidOrder));
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
      await postDue(call, credits);
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
      // Another poller posts to the wallet: it will post these too, or let go of the lease. Claimed
      // in batches meanwhile (in parallel, never touching the wallet), they are a few items of the
      // pending index for its next look, where loose they would be as many as they are.
      const waiting = lease.othersWait || (await ledger.waitFor(address, clock.now()));
      if (credits.some((credit) => credit.batchId === undefined)) await twoLevel.batchLoose(call, credits);
      if (waiting) await sleep(LEASE_WAIT_MS * (0.5 + Math.random()));
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

/** Those of `credits` still to post (a batch's among them), read a posting's worth at a time (a read holds 100 keys at most). */
async function stillDue(ledger: BatchStore, address: string, credits: readonly CreditInTransit[]) {
  const parts: Promise<{ due: CreditInTransit[]; batched: CreditInTransit[] }>[] = [];
  for (let start = 0; start < credits.length; start += MAX_CREDITS_PER_POSTING)
    parts.push(readDue(ledger, address, credits.slice(start, start + MAX_CREDITS_PER_POSTING)));
  return (await Promise.all(parts)).flatMap((part) => [...part.due, ...part.batched]);
}

/**
 * The wallet as it is, and those of `credits` still to post: on their own (`due`), or with the
 * batch that holds them (`batched`); and those posted on their own (`postedBy` says by which
 * posting). A credit not found is skipped.
 */
async function readDue(ledger: BatchStore, address: string, credits: readonly CreditInTransit[]) {
  const read = await ledger.read(
    address,
    credits.map((credit) => credit.transferId),
  );
  const unposted = read.credits.filter((credit) => credit.postedSeq === undefined).sort(paidOrder);
  return {
    wallet: read.wallet,
    due: unposted.filter((credit) => credit.batchId === undefined),
    batched: unposted.filter((credit) => credit.batchId !== undefined),
    postedBy: read.credits.filter((credit) => credit.postedBy !== undefined),
  };
}
