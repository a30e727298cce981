/** Small statistics over samples, and how a budget is judged on them; nothing here mutates its input. */

/** The median of `values`; NaN when empty. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * The `p`-th percentile by linear interpolation between closest ranks (the definition of NumPy's
 * default), so that p50 of an even count is the mean of the middle two.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low] as number;
  return lowValue + ((sorted[high] as number) - lowValue) * (rank - low);
}

/** The confidence of every interval a verdict is drawn from. */
export const CONFIDENCE = 0.95;

/** A median with the interval this run's noise allows it: what a budget is judged on. */
export interface Estimate {
  readonly median: number;
  /** The {@link CONFIDENCE} bootstrap interval of the median. */
  readonly low: number;
  readonly high: number;
  /** How many samples (rounds, batches) it stands on. */
  readonly samples: number;
}

/**
 * The median of `values` and its bootstrap interval (resampled with replacement, percentile
 * method). Seeded, so that the same samples always give the same interval.
 */
export function estimate(values: readonly number[], resamples = 2000): Estimate {
  const random = mulberry32(0x5eed);
  const medians = Array.from({ length: resamples }, () =>
    median(
      Array.from({ length: values.length }, () => values[Math.floor(random() * values.length)] as number),
    ),
  );
  const tail = ((1 - CONFIDENCE) / 2) * 100;
  return {
    median: median(values),
    low: percentile(medians, tail),
    high: percentile(medians, 100 - tail),
    samples: values.length,
  };
}

/** Whether a limit is an upper bound (the value must be at most it) or a lower bound (at least). */
export type Bound = 'max' | 'min';

export type Outcome = 'pass' | 'fail' | 'inconclusive';

/**
 * A value against its limit. A deterministic value (a number) passes or fails. An estimate fails
 * only when its whole interval is on the wrong side of the limit and passes only when its whole
 * interval is on the right side; an interval that straddles the limit is inconclusive: this run
 * cannot tell, and more samples can.
 */
export function judge(value: number | Estimate, limit: number, bound: Bound): Outcome {
  const within = (v: number) => (bound === 'max' ? v <= limit : v >= limit);
  if (typeof value === 'number') return within(value) ? 'pass' : 'fail';
  if (Number.isNaN(value.low) || Number.isNaN(value.high)) return 'fail';
  const lowWithin = within(value.low);
  const highWithin = within(value.high);
  if (lowWithin && highWithin) return 'pass';
  if (!lowWithin && !highWithin) return 'fail';
  return 'inconclusive';
}

/** Whether `samples` leave a budget undecided: the measurements take more samples of those. */
export type Undecided = (name: string, samples: readonly number[]) => boolean;

/** An {@link Undecided} for one limit. */
export const undecidedAgainst =
  (limit: number, bound: Bound): Undecided =>
  (_name, samples) =>
    judge(estimate(samples), limit, bound) === 'inconclusive';

/** A small seeded PRNG (Mulberry32): uniform in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
