/**
 * What the wallet use cases need besides the ledger: the time and fresh ids. Passed in by each
 * function's composition root, so a unit test gives fixed ones.
 */

/** The current time, in epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** Fresh, unguessable ids for new transfers. */
export interface IdSource {
  next(): string;
}

export const systemClock: Clock = { now: () => Date.now() };
