/** Warm overhead: per-invocation time of each function in process, over the baseline's. */
import { pathToFileURL } from 'node:url';
import type { Bundle } from './build.ts';
import { runJsonChild } from './child.ts';
import { type Estimate, estimate, median, type Undecided } from './stats.ts';
import { DYNAMODB_CALLS } from './workload.ts';

export interface WarmOverhead {
  readonly name: string;
  /** Median microseconds per invocation over the batches. */
  readonly functionUs: number;
  readonly baselineUs: number;
  /** Median over batch pairs of (function − baseline), in microseconds. */
  readonly overBaselineUs: number;
  /**
   * What the budget judges: each process's median over its batches of (function − baseline), or
   * for the authorizer (function − its floor), the floor being the baseline plus one check of the
   * token's signature (see `warm-child.ts`); the estimate is over processes, not batches: batches
   * of one process share its compiled code and heap, and processes are what differ from run to run
   * (BENCHMARKS.md, *The warm interval is over processes*).
   */
  readonly overhead: Estimate;
  /** What {@link overhead} is over. */
  readonly over: 'baseline' | 'its signature check';
  /** How many processes measured it: each warm authorizer fetches the JWKS once. */
  readonly processes: number;
  /** What one invocation writes to stdout (its request log line): CloudWatch Logs ingests and bills it. */
  readonly logBytesPerInvocation: number;
  /** DynamoDB calls per invocation, counted at the stubbed `send`. */
  readonly roundTrips: number;
  /** The calls the route's floor makes (`DYNAMODB_CALLS`): the least a request needs. */
  readonly floorRoundTrips: number;
}

export interface WarmOptions {
  readonly batches: number;
  readonly batchSize: number;
  /** Processes per function, one after the other for all functions. */
  readonly passes: number;
  /** At most this many more sets of `passes`, for the functions whose verdict is still open. */
  readonly extraSets: number;
  readonly undecided: Undecided;
  readonly nodeOptions?: readonly string[];
  readonly onProgress?: (message: string) => void;
}

interface Pass {
  readonly functionUs: number[];
  readonly baselineUs: number[];
  readonly floorUs?: number[];
  readonly stubbedClasses: number;
  readonly sendsPerInvocation: number;
  readonly logBytesPerInvocation: number;
}

/**
 * Runs each function's warm benchmark in its own process (so that one function's JIT state and
 * garbage never reach another's) next to the baseline, `passes` times, and pools the batch
 * differences of all its processes. It counts the DynamoDB calls every request made too (the
 * round-trip budget: exactly the floor's).
 */
export async function measureWarmOverhead(
  functions: readonly Bundle[],
  baseline: Bundle,
  envOf: (bundle: Bundle) => Record<string, string>,
  caller: { sub: string; token: string; publicJwk: string },
  options: WarmOptions,
): Promise<WarmOverhead[]> {
  const passes = new Map<string, Pass[]>(functions.map((b) => [b.target.name, []]));
  /** One value per process: the median of its batches' (function − baseline). */
  const judged = (name: string) =>
    (passes.get(name) ?? []).map((pass) => {
      const over = pass.floorUs ?? pass.baselineUs;
      return median(pass.functionUs.map((us, i) => us - (over[i] ?? Number.NaN)));
    });
  const runPasses = async (set: readonly Bundle[]) => {
    for (let pass = 0; pass < options.passes; pass++) {
      for (const bundle of set) {
        passes.get(bundle.target.name)?.push(await runPass(bundle, baseline, envOf(bundle), caller, options));
      }
    }
  };

  await runPasses(functions);
  for (let set = 0; set < options.extraSets; set++) {
    const open = functions.filter((b) => options.undecided(b.target.name, judged(b.target.name)));
    if (open.length === 0) break;
    options.onProgress?.(
      `inconclusive, ${options.passes} more processes: ${open.map((b) => b.target.name).join(', ')}`,
    );
    await runPasses(open);
  }

  return functions.map((bundle): WarmOverhead => {
    const name = bundle.target.name;
    const all = passes.get(name) ?? [];
    const functionUs = all.flatMap((p) => p.functionUs);
    const baselineUs = all.flatMap((p) => p.baselineUs);
    return {
      name,
      functionUs: median(functionUs),
      baselineUs: median(baselineUs),
      overBaselineUs: median(functionUs.map((us, i) => us - (baselineUs[i] ?? Number.NaN))),
      overhead: estimate(judged(name)),
      over: all[0]?.floorUs ? 'its signature check' : 'baseline',
      processes: all.length,
      logBytesPerInvocation: median(all.map((p) => p.logBytesPerInvocation)),
      roundTrips: Math.max(...all.map((p) => p.sendsPerInvocation)),
      floorRoundTrips: DYNAMODB_CALLS[name]?.length ?? 0,
    };
  });
}

async function runPass(
  bundle: Bundle,
  baseline: Bundle,
  env: Record<string, string>,
  caller: { sub: string; token: string; publicJwk: string },
  options: WarmOptions,
): Promise<Pass> {
  const name = bundle.target.name;
  const result = await runJsonChild<Pass>(
    'warm-child.ts',
    [
      name,
      pathToFileURL(bundle.instrumentedFile).href,
      pathToFileURL(baseline.instrumentedFile).href,
      String(options.batches),
      String(options.batchSize),
    ],
    { ...env, BENCH_SUB: caller.sub, BENCH_TOKEN: caller.token, BENCH_PUBLIC_JWK: caller.publicJwk },
    options.nodeOptions,
  );
  if ((DYNAMODB_CALLS[name]?.length ?? 0) > 0 && result.stubbedClasses === 0) {
    throw new Error(`${name}: the instrumented bundle registered no SDK Client to stub`);
  }
  return result;
}
