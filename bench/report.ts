/**
 * The one results table, the budgets, and the parts of BENCHMARKS.md derived from a run (machine,
 * cost model per million requests, estimated Lambda cold starts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import type { Bundle } from './build.ts';
import type { ColdInit } from './cold.ts';
import type { RouteEndToEnd } from './e2e.ts';
import { judgedUs, type WarmOverhead } from './warm.ts';

/** The budgets of the issue; a run exits non-zero when one is missed. */
export const BUDGETS = {
  bundleRatio: 1.15,
  /** A static-asset function's bundle, gzipped, over the gzip of the files it serves. */
  staticAssetsOverServedGzip: 1.1,
  /** Lambda's limit on a synchronous invocation's response payload. */
  lambdaResponseBytes: 6 * 1024 * 1024,
  coldInitRatio: 1.1,
  warmOverheadUs: 10,
  endToEndP50Ratio: 1.25,
} as const;

export interface Results {
  readonly bundles: readonly Bundle[];
  readonly cold: readonly ColdInit[];
  readonly warm: readonly WarmOverhead[];
  readonly endToEnd: readonly RouteEndToEnd[];
  readonly settings: {
    readonly coldRuns: number;
    readonly warmBatches: number;
    readonly warmBatchSize: number;
    readonly warmPasses: number;
    readonly concurrency: number;
    readonly warmUpRequests: number;
    readonly requests: number;
  };
  readonly machine: Machine;
  readonly startedAt: Date;
  readonly durationS: number;
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  /** 1-minute load averages when the run started and ended: how shared the machine was. */
  readonly loadAtStart: number;
  loadAtEnd?: number;
}

/** The machine the run is on, with its load right now. */
export function describeMachine(): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
    loadAtStart: loadavg()[0] ?? 0,
  };
}

export interface Verdict {
  readonly budget: string;
  readonly pass: boolean;
  /** The measured value of every function the budget covers, failing ones marked. */
  readonly detail: string;
}

/** One function against one budget; `note` qualifies the value (e.g. a verdict within the noise). */
type Check = { name: string; value: number; pass: boolean; note?: string };

const fmt = (value: number | undefined, digits = 1) =>
  value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;
const mark = (pass: boolean) => (pass ? '✓' : '✗');

/** Each budget over every function it covers. */
export function verdicts(results: Results): Verdict[] {
  const { bundles, cold, warm, endToEnd } = results;
  const baselineBundle = bundles.find((b) => b.target.kind === 'baseline');
  const baselineCold = cold.find((c) => c.name === 'baseline');
  if (!baselineBundle || !baselineCold) throw new Error('The baseline was not measured');
  const functions = bundles.filter((b) => b.target.kind === 'function');

  const bundleChecks: Check[] = functions
    .filter((b) => b.served === undefined)
    .map((b) => {
      const value = b.rawBytes / baselineBundle.rawBytes;
      return { name: b.target.name, value, pass: value <= BUDGETS.bundleRatio };
    });
  const staticChecks: Check[] = functions.flatMap((b) => {
    if (b.served === undefined) return [];
    const value = b.gzipBytes / b.served.gzipBytes;
    const fits = b.served.largestResponseBytes <= BUDGETS.lambdaResponseBytes;
    return [
      {
        name: b.target.name,
        value,
        pass: value <= BUDGETS.staticAssetsOverServedGzip && fits,
        note: `${b.target.staticAssets?.reason}; largest answer ${mib(b.served.largestResponseBytes)} of ${mib(BUDGETS.lambdaResponseBytes)}${fits ? '' : ' ✗'}`,
      },
    ];
  });
  const coldChecks: Check[] = functions.map((b) => {
    const init = cold.find((c) => c.name === b.target.name);
    const value = init?.ratioToBaseline ?? Number.NaN;
    const quiet = init !== undefined && init.fetches === 0 && init.connects === 0;
    const [low, high] = init?.ratioInterval ?? [Number.NaN, Number.NaN];
    // A verdict the run's own noise could flip is said to be one.
    const uncertain = low <= BUDGETS.coldInitRatio && high > BUDGETS.coldInitRatio;
    return {
      name: b.target.name,
      value,
      pass: value <= BUDGETS.coldInitRatio && quiet,
      ...(uncertain ? { note: `within noise, 90 % CI ${low.toFixed(2)}–${high.toFixed(2)}` } : {}),
    };
  });
  const warmChecks: Check[] = warm.map((w) => ({
    name: w.name,
    value: judgedUs(w),
    pass: judgedUs(w) <= BUDGETS.warmOverheadUs,
    ...(w.overFloorUs === undefined ? {} : { note: 'over its signature check' }),
  }));
  const e2eChecks: Check[] = endToEnd
    .filter((r) => r.floor !== undefined)
    .map((r) => {
      const value = r.gateway.p50Ms / (r.floor?.p50Ms ?? Number.NaN);
      return { name: r.name, value, pass: value <= BUDGETS.endToEndP50Ratio };
    });
  const roundTripChecks: Check[] = warm.map((w) => ({
    name: w.name,
    value: w.roundTrips,
    pass: w.roundTrips === w.floorRoundTrips,
    ...(w.roundTrips === w.floorRoundTrips ? {} : { note: `the floor makes ${w.floorRoundTrips}` }),
  }));
  const initNetwork = cold.filter((c) => c.fetches > 0 || c.connects > 0);

  const verdict = (budget: string, checks: Check[], unit: (v: number) => string, extra = ''): Verdict => ({
    budget,
    pass: checks.length > 0 && checks.every((c) => c.pass),
    detail:
      checks
        .map((c) => `${c.name} ${unit(c.value)}${c.pass ? '' : ' ✗'}${c.note ? ` (${c.note})` : ''}`)
        .join(', ') + (extra ? `; ${extra}` : ''),
  });
  return [
    verdict(`Bundle ≤ ${BUDGETS.bundleRatio} × baseline`, bundleChecks, (v) => `${v.toFixed(3)}×`),
    verdict(
      `Static-asset bundle, gzipped, ≤ ${BUDGETS.staticAssetsOverServedGzip} × the gzip of the files it serves, largest answer ≤ Lambda's 6 MiB response limit`,
      staticChecks,
      (v) => `${v.toFixed(3)}×`,
    ),
    verdict(
      `Cold init ≤ ${BUDGETS.coldInitRatio} × baseline, nothing fetched at init`,
      coldChecks,
      (v) => `${v.toFixed(3)}×`,
      initNetwork.length === 0
        ? 'no fetch or connect during init'
        : `network at init: ${initNetwork.map((c) => `${c.name} (${c.fetches} fetch, ${c.connects} connect)`).join(', ')}`,
    ),
    verdict(
      `Warm overhead ≤ ${BUDGETS.warmOverheadUs} µs over baseline with its request line (authorizer: over its signature check)`,
      warmChecks,
      (v) => `${v.toFixed(1)} µs`,
    ),
    verdict(
      `End-to-end p50 ≤ ${BUDGETS.endToEndP50Ratio} × floor (node:http + the same DynamoDB calls)`,
      e2eChecks,
      (v) => `${v.toFixed(2)}×`,
    ),
    verdict('DynamoDB round trips per request = the floor’s', roundTripChecks, (v) => `${v}`),
  ];
}

/** The results table (Markdown), one row per bundle: the baseline, the reference, then the functions. */
export function resultsTable(results: Results): string {
  const { bundles, cold, warm, endToEnd } = results;
  const baselineBundle = bundles.find((b) => b.target.kind === 'baseline') as Bundle;
  const header = [
    'Function',
    'Bundle raw / gzip',
    'Bundle × base',
    'Cold init p50',
    'Init × base (90 % CI)',
    'Warm / invocation',
    'Warm over base',
    'Route p50 / p99',
    'Route req/s',
    'Floor p50 / p99',
    'Floor req/s',
    'p50 × floor',
  ];
  const rows = bundles.map((bundle) => {
    const name = bundle.target.name;
    const init = cold.find((c) => c.name === name);
    const w = warm.find((x) => x.name === name);
    const e2e = endToEnd.find((r) => r.name === name);
    const isFunction = bundle.target.kind === 'function';
    const bundleRatio = bundle.rawBytes / baselineBundle.rawBytes;
    const initRatio = init?.ratioToBaseline ?? Number.NaN;
    const floorRatio = e2e?.floor ? e2e.gateway.p50Ms / e2e.floor.p50Ms : undefined;
    const label = bundle.target.kind === 'function' ? name : `*${name}* (${bundle.target.kind})`;
    const baselineWarm =
      warm.length > 0 ? warm.map((x) => x.baselineUs).sort((a, b) => a - b)[warm.length >> 1] : undefined;
    return [
      label,
      `${kib(bundle.rawBytes)} / ${kib(bundle.gzipBytes)}`,
      bundle.served
        ? `${bundleRatio.toFixed(3)}, static assets: gzip ${(bundle.gzipBytes / bundle.served.gzipBytes).toFixed(3)}× the served files' ${mark(bundle.gzipBytes / bundle.served.gzipBytes <= BUDGETS.staticAssetsOverServedGzip && bundle.served.largestResponseBytes <= BUDGETS.lambdaResponseBytes)}`
        : `${bundleRatio.toFixed(3)}${isFunction ? ` ${mark(bundleRatio <= BUDGETS.bundleRatio)}` : ''}`,
      `${fmt(init?.medianMs, 1)} ms`,
      `${initRatio.toFixed(3)}${isFunction ? ` ${mark(initRatio <= BUDGETS.coldInitRatio)}` : ''}${
        init && isFunction ? ` (${init.ratioInterval[0].toFixed(2)}–${init.ratioInterval[1].toFixed(2)})` : ''
      }`,
      w ? `${fmt(w.functionUs)} µs` : name === 'baseline' ? `${fmt(baselineWarm, 2)} µs` : '—',
      w === undefined
        ? '—'
        : w.overFloorUs === undefined
          ? `${fmt(w.overheadUs)} µs ${mark(w.overheadUs <= BUDGETS.warmOverheadUs)}`
          : `${fmt(w.overheadUs)} µs; ${fmt(w.overFloorUs)} µs over its signature check ${mark(w.overFloorUs <= BUDGETS.warmOverheadUs)}`,
      e2e ? `${fmt(e2e.gateway.p50Ms, 2)} / ${fmt(e2e.gateway.p99Ms, 2)} ms` : '—',
      e2e ? fmt(e2e.gateway.throughput, 0) : '—',
      e2e?.floor ? `${fmt(e2e.floor.p50Ms, 2)} / ${fmt(e2e.floor.p99Ms, 2)} ms` : '—',
      e2e?.floor ? fmt(e2e.floor.throughput, 0) : '—',
      floorRatio === undefined
        ? '—'
        : `${floorRatio.toFixed(2)} ${mark(floorRatio <= BUDGETS.endToEndP50Ratio)}`,
    ];
  });
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The budget verdicts as PASS/FAIL lines. */
export function verdictLines(list: readonly Verdict[]): string {
  return list.map((v) => `${v.pass ? 'PASS' : 'FAIL'}  ${v.budget}: ${v.detail}`).join('\n');
}

/** Prices of the cost model (us-east-1, on-demand, first tiers). */
/**
 * Estimated Lambda cold start of each function: the published hello-world median plus this
 * run's init delta over the hello-world reference, carried over with a CPU factor range.
 */
export function coldStartEstimates(
  results: Results,
  helloWorldMs: number,
  factors: readonly [number, number],
): string {
  const hello = results.cold.find((c) => c.name === 'hello');
  const baseline = results.cold.find((c) => c.name === 'baseline');
  if (!hello || !baseline) return '';
  const rows = results.cold
    .filter((c) => c.name !== 'hello')
    .map((c) => {
      const delta = c.medianMs - hello.medianMs;
      const overBaseline = c.medianMs - baseline.medianMs;
      return [
        c.name,
        `${c.medianMs.toFixed(1)} ms`,
        `${delta.toFixed(1)} ms`,
        c.name === 'baseline' ? '—' : `${overBaseline >= 0 ? '+' : ''}${overBaseline.toFixed(1)} ms`,
        `${Math.round(helloWorldMs + delta * factors[0])}–${Math.round(helloWorldMs + delta * factors[1])} ms`,
      ];
    });
  const header = [
    'Function',
    'Import here',
    'Over hello-world',
    'Over baseline',
    'Estimated Lambda cold start',
  ];
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const BEGIN = '<!-- bench:results:begin -->';
const END = '<!-- bench:results:end -->';

/**
 * Replaces the generated part of BENCHMARKS.md (between the markers) with `generated`, keeping the
 * hand-written rest; a file without the markers gets them appended.
 */
export async function writeBenchmarksMd(path: string, generated: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    text = '# Benchmarks\n\n';
  }
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  const block = `${BEGIN}\n${generated.trim()}\n${END}`;
  const next =
    begin >= 0 && end > begin
      ? text.slice(0, begin) + block + text.slice(end + END.length)
      : `${text.trimEnd()}\n\n${block}\n`;
  await writeFile(path, next);
}
