/** Warm overhead: per-invocation time of each function in process, over the baseline's. */
import { pathToFileURL } from 'node:url';
import type { Bundle } from './build.ts';
import { runJsonChild } from './child.ts';
import { median } from './stats.ts';
import { DYNAMODB_CALLS } from './workload.ts';

export interface WarmOverhead {
  readonly name: string;
  /** Median microseconds per invocation over the batches. */
  readonly functionUs: number;
  readonly baselineUs: number;
  /** Median over batch pairs of (function − baseline), in microseconds. */
  readonly overheadUs: number;
  /**
   * For the authorizer: median over batches of (function − its floor), the floor being the
   * baseline plus one check of the token's signature (see `warm-child.ts`). What it adds to that.
   */
  readonly overFloorUs?: number;
  readonly batches: number;
  readonly batchSize: number;
  /** What one invocation writes to stdout (its request log line): CloudWatch Logs ingests and bills it. */
  readonly logBytesPerInvocation: number;
  /** DynamoDB calls per invocation, counted at the stubbed `send`. */
  readonly roundTrips: number;
  /** The calls the route's floor makes (`DYNAMODB_CALLS`): the least a request needs. */
  readonly floorRoundTrips: number;
}

/**
 * Runs each function's warm benchmark in its own process (so that one function's JIT state and
 * garbage never reach another's) next to the baseline, and counts the DynamoDB calls every
 * request made (the round-trip budget: exactly the floor's). All functions are measured `passes` times, one after the other,
 * and each keeps its least disturbed pass: on a shared machine, other work only ever adds time.
 */
export async function measureWarmOverhead(
  functions: readonly Bundle[],
  baseline: Bundle,
  envOf: (bundle: Bundle) => Record<string, string>,
  caller: { sub: string; token: string; publicJwk: string },
  options: { batches: number; batchSize: number; passes: number; nodeOptions?: readonly string[] },
): Promise<WarmOverhead[]> {
  const best = new Map<string, WarmOverhead>();
  for (let pass = 0; pass < options.passes; pass++) {
    for (const bundle of functions) {
      const measured = await measureOne(bundle, baseline, envOf(bundle), caller, options);
      const previous = best.get(measured.name);
      if (!previous || judgedUs(measured) < judgedUs(previous)) best.set(measured.name, measured);
    }
  }
  return functions.map((bundle) => best.get(bundle.target.name) as WarmOverhead);
}

/** What the budget judges: overhead over the floor where there is one, over the baseline elsewhere. */
export const judgedUs = (warm: WarmOverhead): number => warm.overFloorUs ?? warm.overheadUs;

async function measureOne(
  bundle: Bundle,
  baseline: Bundle,
  env: Record<string, string>,
  caller: { sub: string; token: string; publicJwk: string },
  options: { batches: number; batchSize: number; nodeOptions?: readonly string[] },
): Promise<WarmOverhead> {
  const name = bundle.target.name;
  const { result } = await runJsonChild<{
    functionUs: number[];
    baselineUs: number[];
    floorUs?: number[];
    stubbedClasses: number;
    sendsPerInvocation: number;
    logBytesPerInvocation: number;
  }>(
    'warm-child.ts',
    [
      name,
      pathToFileURL(bundle.instrumentedFile).href,
      pathToFileURL(baseline.instrumentedFile).href,
      String(options.batches),
      String(options.batchSize),
    ],
    { ...env, BENCH_SUB: caller.sub, BENCH_TOKEN: caller.token, BENCH_PUBLIC_JWK: caller.publicJwk },
    { nodeOptions: options.nodeOptions ?? [] },
  );
  const expectedSends = DYNAMODB_CALLS[name]?.length ?? 0;
  if (expectedSends > 0 && result.stubbedClasses === 0) {
    throw new Error(`${name}: the instrumented bundle registered no SDK Client to stub`);
  }
  return {
    name,
    functionUs: median(result.functionUs),
    baselineUs: median(result.baselineUs),
    overheadUs: median(result.functionUs.map((us, i) => us - (result.baselineUs[i] ?? Number.NaN))),
    ...(result.floorUs
      ? { overFloorUs: median(result.functionUs.map((us, i) => us - (result.floorUs?.[i] ?? Number.NaN))) }
      : {}),
    batches: options.batches,
    batchSize: options.batchSize,
    logBytesPerInvocation: result.logBytesPerInvocation,
    roundTrips: result.sendsPerInvocation,
    floorRoundTrips: expectedSends,
  };
}
