import { randomUUID } from 'node:crypto';
import { eachLimited } from '../../util/each-limited.ts';
import type { recentEntries } from '../../util/recent-entries.ts';
import type { AccountState } from '../model/accounts.ts';
import { type MovementDeadline, patiently, retryMovement } from '../model/movement-retry.ts';
import type { Clock } from '../model/ports.ts';
import {
  batchSum,
  type CreditBatch,
  type CreditInTransit,
  listingOf,
  MAX_CREDITS_PER_BATCH,
} from './credit-batch.ts';
import type { BatchStore } from './ports.ts';

/** The most batches one posting takes: the wallet, then a mark per batch, in one transaction of at most 100 items. */
export const MAX_BATCHES_PER_POSTING = 99;

/**
 * How many transactions of batching or completing one call has in flight: a look at the pending
 * index can hand the lease's holder a few hundred batches, which at once would be as many
 * requests queued behind the client's sockets, each against its 2 s request timeout.
 */
const IN_FLIGHT = 16;

/** What the two levels need of a poster's call on one wallet (./post-credits.ts). */
export interface BatchingCall {
  readonly address: string;
  /** The credits this call posted, its own and others'. */
  readonly posted: Set<string>;
}

interface TwoLevelDeps<C extends BatchingCall> {
  readonly ledger: BatchStore;
  readonly clock: Clock;
  /** Each wallet as this poster's last posting to it left it. */
  readonly known: ReturnType<typeof recentEntries<AccountState>>;
  /** The deadline of a movement of `call`: no transaction of it starts past it. */
  readonly deadline: (call: C, message: string) => MovementDeadline;
  /** Before each posting to the wallet: throws when the call is out of time, renews its lease. */
  readonly beforePosting: (call: C) => Promise<void>;
}

/**
 * Posts credits in transit to a wallet on two levels, so that one wallet takes far more credits a
 * second than one transaction at a time on its item can hold (docs/decisions/hot-wallets.md, "Two
 * levels"):
 * 1. Batching, in parallel: ONE transaction per MAX_CREDITS_PER_BATCH credits claims them for a
 *    batch item. No money moves: a batch is still the clearing account's.
 * 2. Posting, the wallet's one writer (the lease's holder): ONE transaction writes the wallet once
 *    and marks up to MAX_BATCHES_PER_POSTING batches posted, each where its credits go in the
 *    wallet (its first seq and the balance before it). The money is the wallet's from then on.
 * 3. Completing, in parallel: ONE transaction per batch writes its entries and marks its credits
 *    posted at them, and the batch completed.
 * Each step is conditional on the one before it and on not being done already, so a redelivered,
 * concurrent or cut-short call posts nothing twice and picks up where another stopped: a credit a
 * batch holds goes on with that batch, whatever stage it is at.
 */
export function makeTwoLevelPosting<C extends BatchingCall>({
  ledger,
  clock,
  known,
  deadline,
  beforePosting,
}: TwoLevelDeps<C>) {
  const now = () => new Date(clock.now()).toISOString();

  /** Claims the loose credits of `chunk` for one new batch: that batch, and those already holding some of them. */
  function batchChunk(call: C, chunk: readonly CreditInTransit[]) {
    return retryMovement<{ made: CreditBatch[]; elsewhere: string[] }>(
      deadline(call, 'The credits could not be batched; they are delivered again'),
      (n, beforeWrite) =>
        patiently<{ made: CreditBatch[]; elsewhere: string[] }>(async () => {
          let loose = chunk;
          let elsewhere: string[] = [];
          if (n > 1) {
            // Refused: another call batched or posted some of them meanwhile.
            const { credits } = await ledger.read(
              call.address,
              chunk.map((credit) => credit.transferId),
            );
            const due = credits.filter((credit) => credit.postedSeq === undefined);
            loose = due.filter((credit) => credit.batchId === undefined);
            elsewhere = due.flatMap((credit) => (credit.batchId === undefined ? [] : [credit.batchId]));
          }
          if (loose.length === 0) return { done: { made: [], elsewhere } };
          const batch: CreditBatch = {
            batchId: randomUUID(),
            address: call.address,
            credits: loose.map(listingOf),
          };
          beforeWrite();
          return (await ledger.batch(batch, now())) === 'batched'
            ? { done: { made: [batch], elsewhere } }
            : { again: 'now' };
        }),
    );
  }

  /** Posts `group` (not posted when read) in one posting: the batches of it now posted, by this call or another. */
  function postGroup(call: C, group: readonly CreditBatch[]) {
    const { address } = call;
    return retryMovement<CreditBatch[]>(
      deadline(call, 'The wallet is busy; its credits are delivered again'),
      (n, beforeWrite) =>
        patiently<CreditBatch[]>(async () => {
          // The first try trusts this poster's memory of the wallet: one round trip, no read.
          const remembered = n === 1 ? known.get(address) : undefined;
          known.delete(address);
          const [wallet, batches] = await Promise.all([
            remembered ?? ledger.read(address, []).then((read) => read.wallet),
            n === 1 ? group : ledger.readBatches(group.map((batch) => batch.batchId)),
          ]);
          const due = batches.filter((batch) => batch.posting === undefined);
          const postedElsewhere = batches.filter((batch) => batch.posting !== undefined);
          if (due.length === 0) return { done: postedElsewhere };
          beforeWrite();
          const result = await ledger.postBatches({ address, wallet, batches: due, postedAt: now() });
          if (result.kind !== 'posted') return { again: remembered ? 'now' : 'after-pause' };
          known.set(address, {
            exists: true,
            balance: wallet.balance + due.reduce((sum, batch) => sum + batchSum(batch), 0n),
            seq: wallet.seq + due.reduce((count, batch) => count + batch.credits.length, 0),
          });
          return {
            done: [...postedElsewhere, ...due.map((batch, i) => ({ ...batch, posting: result.postings[i] }))],
          };
        }),
    );
  }

  /** Completes a posted batch, and counts its credits posted by this call if it was the one to. */
  async function completeBatch(call: C, batch: CreditBatch) {
    // One per completion, so that a try whose answer was lost still counts its credits.
    const completer = randomUUID();
    const outcome = await retryMovement<'completed' | 'already'>(
      deadline(call, 'The batch could not be completed; its credits are delivered again'),
      (_n, beforeWrite) =>
        patiently<'completed' | 'already'>(async () => {
          beforeWrite();
          const outcome = await ledger.complete(batch, now(), completer);
          return outcome === 'busy' ? { again: 'after-pause' } : { done: outcome };
        }),
    );
    if (outcome === 'completed') for (const credit of batch.credits) call.posted.add(credit.transferId);
  }

  /** Claims the credits no batch holds for new batches, in parallel: those batches, and the ids of others' holding some. */
  async function batchLoose(call: C, credits: readonly CreditInTransit[]) {
    const loose = credits.filter((credit) => credit.batchId === undefined);
    const chunks: CreditInTransit[][] = [];
    for (let start = 0; start < loose.length; start += MAX_CREDITS_PER_BATCH)
      chunks.push(loose.slice(start, start + MAX_CREDITS_PER_BATCH));
    const claimed: { made: CreditBatch[]; elsewhere: string[] }[] = [];
    await eachLimited(chunks, IN_FLIGHT, async (chunk) => void claimed.push(await batchChunk(call, chunk)));
    return claimed;
  }

  /** Posts `credits` (not posted when read), whatever step each is at, to the end. */
  async function post(call: C, credits: readonly CreditInTransit[]): Promise<void> {
    const claimed = await batchLoose(call, credits);
    const heldElsewhere = new Set([
      ...credits.flatMap((credit) => (credit.batchId === undefined ? [] : [credit.batchId])),
      ...claimed.flatMap((claim) => claim.elsewhere),
    ]);
    const batches = [
      ...claimed.flatMap((claim) => claim.made),
      ...(await ledger.readBatches([...heldElsewhere])),
    ].sort(batchOrder);
    const toPost = batches.filter((batch) => batch.posting === undefined);
    const posted = new Map(
      batches.filter((batch) => batch.posting && !batch.completedAt).map((b) => [b.batchId, b]),
    );
    let stopped: { readonly error: unknown } | undefined;
    try {
      for (let start = 0; start < toPost.length; start += MAX_BATCHES_PER_POSTING) {
        await beforePosting(call);
        for (const batch of await postGroup(call, toPost.slice(start, start + MAX_BATCHES_PER_POSTING)))
          if (!batch.completedAt) posted.set(batch.batchId, batch);
      }
    } catch (error) {
      // Those posted are completed all the same: their money is the wallet's already.
      stopped = { error };
    }
    await eachLimited([...posted.values()], IN_FLIGHT, (batch) => completeBatch(call, batch));
    if (stopped) throw stopped.error;
  }

  return { batchLoose, post };
}

/** Batches in the order their credits were paid, the oldest first. */
const batchOrder = (a: CreditBatch, b: CreditBatch) =>
  (a.credits[0]?.createdAt ?? '').localeCompare(b.credits[0]?.createdAt ?? '') ||
  a.batchId.localeCompare(b.batchId);
