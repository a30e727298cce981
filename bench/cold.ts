/**
 * Cold init: how long a fresh Node.js process takes to import each bundle, measured inside the
 * child around `await import(bundle)` so that process start-up, common to all, stays out.
 */
import { pathToFileURL } from 'node:url';
import type { Bundle } from './build.ts';
import { runJsonChild } from './child.ts';
import { type Estimate, estimate, median, type Undecided } from './stats.ts';
import { bundleBaselineOf } from './targets.ts';

export interface ColdInit {
  readonly name: string;
  /** Median wall time of the import, in milliseconds. */
  readonly medianMs: number;
  /** Median CPU time (user + system, all threads) of the import, in milliseconds. */
  readonly medianCpuMs: number;
  /** Per-round ratios of the import's CPU time to its baseline's ({@link bundleBaselineOf}) in the same round. */
  readonly ratios: readonly number[];
  /** Their median and interval: what the budget judges. */
  readonly ratio: Estimate;
  /** `fetch` calls and socket connects during init and the 100 ms after it (must both be 0). */
  readonly fetches: number;
  readonly connects: number;
}

export interface ColdInitOptions {
  readonly rounds: number;
  /** At most this many more sets of `rounds`, for the functions whose verdict is still open. */
  readonly extraSets: number;
  readonly undecided: Undecided;
  readonly onProgress?: (message: string) => void;
}

/**
 * Imports every bundle `rounds` times, one process at a time, in rounds of all bundles whose order
 * rotates each round, so that the baseline's samples are interleaved with every function's and
 * drift on a noisy machine hits all bundles alike. A first round warms the page cache and is
 * dropped. The ratio is per round (each bundle against the baseline of its own round): on this
 * host a process imports in one of two modes that come in phases lasting several rounds, and a
 * ratio of medians swung with the share of each mode in either sample. It is a ratio of CPU time,
 * which waiting for a core on a shared machine does not inflate, and which counts the compiler and
 * GC threads that on Lambda's fraction of a core compete with the import. A function with a second
 * SDK client (S3, KMS) is compared with the baseline that carries that client, as its bundle is: like
 * with like. Functions whose interval straddles the limit get up to `extraSets` more sets of rounds,
 * with their baselines alone beside them.
 */
export async function measureColdInit(
  bundles: readonly Bundle[],
  baseline: Bundle,
  envOf: (bundle: Bundle) => Record<string, string>,
  options: ColdInitOptions,
): Promise<ColdInit[]> {
  const wallMs = new Map<string, number[]>(bundles.map((b) => [b.target.name, []]));
  const cpuMs = new Map<string, number[]>(bundles.map((b) => [b.target.name, []]));
  const ratios = new Map<string, number[]>(bundles.map((b) => [b.target.name, []]));
  const progress = options.onProgress ?? (() => undefined);

  const runRounds = async (set: readonly Bundle[], rounds: number, warmUp: boolean) => {
    for (let round = warmUp ? -1 : 0; round < rounds; round++) {
      const shift = Math.max(round, 0) % set.length;
      const cpuThisRound = new Map<string, number>();
      for (const bundle of [...set.slice(shift), ...set.slice(0, shift)]) {
        const result = await runJsonChild<{ ms: number; cpuMs: number; handler: boolean }>(
          'cold-child.ts',
          [pathToFileURL(bundle.file).href, 'time'],
          envOf(bundle),
        );
        if (!result.handler) throw new Error(`${bundle.target.name}: the bundle exports no handler function`);
        if (round < 0) continue;
        wallMs.get(bundle.target.name)?.push(result.ms);
        cpuMs.get(bundle.target.name)?.push(result.cpuMs);
        cpuThisRound.set(bundle.target.name, result.cpuMs);
      }
      for (const bundle of set) {
        const cpu = cpuThisRound.get(bundle.target.name);
        const baselineCpu = cpuThisRound.get(bundleBaselineOf(bundle.target));
        if (cpu !== undefined && baselineCpu !== undefined)
          ratios.get(bundle.target.name)?.push(cpu / baselineCpu);
      }
    }
  };

  progress(`${options.rounds} rounds of ${bundles.length} fresh processes`);
  await runRounds(bundles, options.rounds, true);
  for (let set = 0; set < options.extraSets; set++) {
    const open = bundles.filter(
      (b) =>
        b.target.kind === 'function' && options.undecided(b.target.name, ratios.get(b.target.name) ?? []),
    );
    if (open.length === 0) break;
    progress(`inconclusive, ${options.rounds} more rounds: ${open.map((b) => b.target.name).join(', ')}`);
    const theirBaselines = bundles.filter(
      (b) => b === baseline || open.some((o) => bundleBaselineOf(o.target) === b.target.name),
    );
    await runRounds([...theirBaselines, ...open], options.rounds, false);
  }

  const results: ColdInit[] = [];
  for (const bundle of bundles) {
    const check = await runJsonChild<{ fetches: number; connects: number }>(
      'cold-child.ts',
      [pathToFileURL(bundle.file).href, 'check'],
      envOf(bundle),
    );
    const name = bundle.target.name;
    const bundleRatios = ratios.get(name) ?? [];
    results.push({
      name,
      medianMs: median(wallMs.get(name) ?? []),
      medianCpuMs: median(cpuMs.get(name) ?? []),
      ratios: bundleRatios,
      ratio: estimate(bundleRatios),
      fetches: check.fetches,
      connects: check.connects,
    });
  }
  return results;
}
