import { randomUUID } from 'node:crypto';
import { eachLimited } from '../../util/each-limited.ts';
import { patiently, retryMovement } from '../model/movement-retry.ts';
import type { Clock } from '../model/ports.ts';
import type { BatchSweepStore } from './ports.ts';

/*
 * A batch posted into its wallet and not completed (its poster stopped between the two
 * transactions: a timeout, a crash) holds money the wallet may spend while its entries are not
 * written and its credits not marked posted. The stream delivers its credits again and the next
 * call completes it, but only when the stream gets to it: its retries, and its failure queue once
 * they run out, take hours. The sweep completes it within minutes: scheduled, it reads the batches
 * the `pending` index holds as posted and not completed, and completes those posted longer ago than
 * a poster takes, with the same transaction the poster's completion uses. Whoever comes first,
 * the other finds the batch completed and writes nothing (its condition).
 */

/** A batch posted this long ago and not completed: its poster stopped (a call ends within seconds). */
export const SWEEP_AFTER_MS = 60_000;

/** How often the sweep runs (infra/constructs/batch-sweep.ts, and `npm start`). */
export const SWEEP_EVERY_MS = 2 * 60_000;

/**
 * How long after its posting a batch not completed is named by the ledger audit: by then the
 * sweep ran several times and could not complete it (shared/wallet/audit/uncompleted-batches.ts).
 */
export const UNCOMPLETED_NAMED_AFTER_MS = SWEEP_AFTER_MS + 5 * SWEEP_EVERY_MS;

/** Batches read per shard of the index each run: what one run completes at most, 8 × 100. */
const SWEEP_PER_SHARD = 100;

/** Batches completed at once: each is one transaction of up to 99 items. */
const SWEEP_CONCURRENCY = 4;

/** How long one run may go on trying one batch (a busy item, throttling). */
const COMPLETE_DEADLINE_MS = 20_000;

export interface SweepResult {
  /** Batches found posted and not completed, past SWEEP_AFTER_MS. */
  readonly found: number;
  /** Of those, completed by this run, and their credits. */
  readonly completed: number;
  readonly creditsPosted: number;
  /** Completed by someone else meanwhile (a poster's call). */
  readonly already: number;
  /** Not completed: busy past the deadline, or refused (a ledger not as its posting left it: the audit names it). */
  readonly failed: number;
}

export function makeSweepBatches({ store, clock }: { store: BatchSweepStore; clock: Clock }) {
  return async (): Promise<SweepResult> => {
    const cutoff = clock.now() - SWEEP_AFTER_MS;
    const due = (await store.postedUncompleted(SWEEP_PER_SHARD)).filter(
      (batch) => Date.parse(batch.posting?.postedAt ?? '') <= cutoff,
    );
    let completed = 0;
    let creditsPosted = 0;
    let already = 0;
    let failed = 0;
    await eachLimited(due, SWEEP_CONCURRENCY, async (batch) => {
      // One per completion, so that a try whose answer was lost still counts as this one's.
      const completer = randomUUID();
      try {
        const outcome = await retryMovement<'completed' | 'already'>(
          { at: Date.now() + COMPLETE_DEADLINE_MS, message: 'The batch could not be completed' },
          (_n, beforeWrite) =>
            patiently<'completed' | 'already'>(async () => {
              beforeWrite();
              const result = await store.complete(batch, new Date(clock.now()).toISOString(), completer);
              return result === 'busy' ? { again: 'after-pause' } : { done: result };
            }),
        );
        if (outcome === 'completed') {
          completed++;
          creditsPosted += batch.credits.length;
        } else already++;
      } catch {
        failed++;
      }
    });
    return { found: due.length, completed, creditsPosted, already, failed };
  };
}
