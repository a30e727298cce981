import { TemporarilyUnavailableError } from '../../errors.ts';

/*
 * How a movement goes on after another one changed an item it read: read again, decide again,
 * write again, until a deadline. A send that meets a busy recipient goes through the clearing
 * account at once, without a pause, and never touches a hot wallet (shared/wallet/dynamodb/keys.ts),
 * so a send waits only for the payer's own other movements; a posting, for the wallet's; a
 * deposit, for the issuance account's and the credited wallet's, as it writes both.
 */

/** One attempt's verdict: the movement's answer, or try again (after a pause, or at once). */
export type AttemptVerdict<T> = { readonly done: T } | { readonly again: 'after-pause' | 'now' };

export interface MovementDeadline {
  /** Epoch ms past which no new transaction starts: a 503 with Retry-After, nothing written. */
  readonly at: number;
  readonly message: string;
}

/** Nothing was written, and another try soon may succeed: a 503 with Retry-After. */
export const busy = (message: string, cause?: unknown) =>
  new TemporarilyUnavailableError(message, 1, cause === undefined ? undefined : { cause });

// Full jitter: the transaction that makes us wait is still in flight, and lasts milliseconds.
const pause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 5 * 2 ** attempt)));

/**
 * Runs `attempt` until it is done, or throws `busy` once the deadline has passed. An attempt calls
 * `beforeWrite()` just before its transaction: past the deadline, that throws instead, so a slow
 * read never starts a transaction that could outlast the request. Past the deadline no attempt
 * starts again either: a transaction started just before it can end refused just before the
 * answer is due, and the read of another attempt would outlast the request.
 */
export async function retryMovement<T>(
  deadline: MovementDeadline,
  attempt: (n: number, beforeWrite: () => void) => Promise<AttemptVerdict<T>>,
): Promise<T> {
  const beforeWrite = () => {
    if (Date.now() > deadline.at) throw busy(deadline.message);
  };
  for (let n = 1; ; n++) {
    if (n > 1) beforeWrite();
    const verdict = await attempt(n, beforeWrite);
    if ('done' in verdict) return verdict.done;
    if (verdict.again === 'after-pause') await pause(n);
  }
}

/**
 * An attempt of a posting: throttled (or unanswered) past one call's tries, it is tried again after
 * a pause within its deadline, not handed back to the stream, whose bounded retries one short
 * episode would use up. The next attempt reads again, so a write that did commit is not made twice.
 */
export async function patiently<T>(attempt: () => Promise<AttemptVerdict<T>>): Promise<AttemptVerdict<T>> {
  try {
    return await attempt();
  } catch (error) {
    if (error instanceof TemporarilyUnavailableError) return { again: 'after-pause' };
    throw error;
  }
}
