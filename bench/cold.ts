/**
 * Cold init: how long a fresh Node.js process takes to import each bundle, measured inside the
 * child around `await import(bundle)` so that process start-up, common to all, stays out.
 */
import { pathToFileURL } from 'node:url';
import type { Bundle } from './build.ts';
import { runJsonChild } from './child.ts';
import { median, medianInterval } from './stats.ts';

export interface ColdInit {
  readonly name: string;
  /** Import times in milliseconds, one per fresh process. */
  readonly samplesMs: readonly number[];
  readonly medianMs: number;
  /** Median over the rounds of (import time / the baseline's in the same round). */
  readonly ratioToBaseline: number;
  /** 90 % bootstrap interval of that ratio: what the noise of this run allows it to be. */
  readonly ratioInterval: readonly [number, number];
  /** `fetch` calls and socket connects during init and the 100 ms after it (must both be 0). */
  readonly fetches: number;
  readonly connects: number;
}

/**
 * Imports every bundle `rounds` times, one process at a time, in rounds of all bundles whose order
 * rotates each round, so that the baseline's samples are interleaved with every function's and
 * drift on a noisy machine hits all bundles alike. A first round warms the page cache and is dropped.
 * The ratio is the median of per-round ratios (each bundle against the baseline of its own
 * round): on this host a process imports in one of two modes (≈ 55 or ≈ 85 ms for the baseline)
 * that come in phases lasting several rounds, and a ratio of medians swung with the share of each
 * mode in either sample (90 % intervals ±0.2 where the paired ratio gave ±0.06 on the same data).
 */
export async function measureColdInit(
  bundles: readonly Bundle[],
  baseline: Bundle,
  envOf: (bundle: Bundle) => Record<string, string>,
  rounds: number,
  onProgress: (round: number) => void = () => undefined,
): Promise<ColdInit[]> {
  const samples = new Map<string, number[]>(bundles.map((b) => [b.target.name, []]));
  for (let round = -1; round < rounds; round++) {
    const shift = Math.max(round, 0) % bundles.length;
    const order = [...bundles.slice(shift), ...bundles.slice(0, shift)];
    for (const bundle of order) {
      const { result } = await runJsonChild<{ ms: number; handler: boolean }>(
        'cold-child.ts',
        [pathToFileURL(bundle.file).href, 'time'],
        envOf(bundle),
      );
      if (!result.handler) throw new Error(`${bundle.target.name}: the bundle exports no handler function`);
      if (round >= 0) samples.get(bundle.target.name)?.push(result.ms);
    }
    if (round >= 0) onProgress(round + 1);
  }
  const baselineSamples = samples.get(baseline.target.name) ?? [];
  const results: ColdInit[] = [];
  for (const bundle of bundles) {
    const { result: check } = await runJsonChild<{ fetches: number; connects: number; handler: boolean }>(
      'cold-child.ts',
      [pathToFileURL(bundle.file).href, 'check'],
      envOf(bundle),
    );
    const samplesMs = samples.get(bundle.target.name) ?? [];
    const ratios = samplesMs.map((ms, round) => ms / (baselineSamples[round] ?? Number.NaN));
    results.push({
      name: bundle.target.name,
      samplesMs,
      medianMs: median(samplesMs),
      ratioToBaseline: median(ratios),
      ratioInterval: medianInterval(ratios),
      fetches: check.fetches,
      connects: check.connects,
    });
  }
  return results;
}
