/** Small statistics over samples; none of them mutates its input. */

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

/**
 * A 90 % bootstrap interval of the median of `values` (resampled with replacement): how far noise
 * alone could move it. Seeded, so that the same samples always give the same interval.
 */
export function medianInterval(values: readonly number[], resamples = 2000): [number, number] {
  const random = mulberry32(0x5eed);
  const medians = Array.from({ length: resamples }, () =>
    median(
      Array.from({ length: values.length }, () => values[Math.floor(random() * values.length)] as number),
    ),
  );
  return [percentile(medians, 5), percentile(medians, 95)];
}

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
