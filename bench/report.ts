/**
 * The results table and the parts of BENCHMARKS.md derived from a run (the table, the verdicts,
 * estimated Lambda cold starts); the cost model is `cost-model.ts`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { markOf, type Verdict } from './budgets.ts';
import type { Results } from './results.ts';
import type { Estimate } from './stats.ts';
import { bundleBaselineOf } from './targets.ts';

const fmt = (value: number | undefined, digits = 1) =>
  value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const withInterval = (e: Estimate, digits: number, unit = '') =>
  `${fmt(e.median, digits)}${unit} (${fmt(e.low, digits)} to ${fmt(e.high, digits)})`;

export const table = (header: readonly string[], rows: readonly (readonly string[])[]) => {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
};

/** The results table (Markdown), one row per bundle: the baseline, the reference, then the functions. */
export function resultsTable(results: Results, list: readonly Verdict[]): string {
  const { bundles, cold, warm, endToEnd } = results;
  const rawOf = (name: string) => bundles.find((b) => b.target.name === name)?.rawBytes ?? Number.NaN;
  const baselineWarmUs =
    warm.length > 0 ? warm.map((w) => w.baselineUs).sort((a, b) => a - b)[warm.length >> 1] : undefined;
  const rows = bundles.map((bundle) => {
    const { name, kind } = bundle.target;
    const init = cold.find((c) => c.name === name);
    const w = warm.find((x) => x.name === name);
    const e2e = endToEnd.find((r) => r.name === name);
    const isFunction = kind === 'function';
    const mark = (id: string) => markOf(list, id, name);
    const over = bundleBaselineOf(bundle.target);
    const baseRaw = rawOf(over);
    return [
      isFunction ? name : `*${name}* (${kind})`,
      `${kib(bundle.rawBytes)} / ${kib(bundle.gzipBytes)}`,
      bundle.served
        ? `${fmt(bundle.rawBytes / baseRaw, 3)}; gzip ${fmt(bundle.gzipBytes / bundle.served.gzipBytes, 3)}× the served files'${mark('staticAssets')}`
        : `${fmt(bundle.rawBytes / baseRaw, 3)}${mark('bundle')}${isFunction && over !== 'baseline' ? ` over ${over}` : ''}`,
      init ? `${fmt(init.medianMs)} / ${fmt(init.medianCpuMs)} ms` : '—',
      init && isFunction
        ? `${withInterval(init.ratio, 3)}${mark('coldInit')}${over !== 'baseline' ? ` over ${over}` : ''}`
        : init && kind === 'client-baseline'
          ? `${withInterval(init.ratio, 3)} (itself, over baseline)`
          : kind === 'baseline'
            ? '1'
            : '—',
      w ? `${fmt(w.functionUs)} µs` : kind === 'baseline' ? `${fmt(baselineWarmUs)} µs` : '—',
      w
        ? `${withInterval(w.overhead, 1, ' µs')}${mark('warm')}${w.over === 'baseline' ? '' : ` over ${w.over} (${fmt(w.overBaselineUs)} µs over the baseline)`}`
        : '—',
      e2e ? `${fmt(e2e.gateway.p50Ms, 2)} / ${fmt(e2e.gateway.p99Ms, 2)} ms` : '—',
      e2e ? fmt(e2e.gateway.throughput, 0) : '—',
      e2e?.floor ? `${fmt(e2e.floor.p50Ms, 2)} / ${fmt(e2e.floor.p99Ms, 2)} ms` : '—',
      e2e?.floor ? fmt(e2e.floor.throughput, 0) : '—',
      e2e?.ratio ? `${withInterval(e2e.ratio, 2)}${mark('endToEnd')}` : '—',
    ];
  });
  return table(
    [
      'Function',
      'Bundle raw / gzip',
      'Bundle × base',
      'Init p50 wall / CPU',
      'Init CPU × base (95 % CI)',
      'Warm / invocation',
      'Warm over base (95 % CI)',
      'Route p50 / p99',
      'Route req/s',
      'Floor p50 / p99',
      'Floor req/s',
      'p50 × floor (95 % CI)',
    ],
    rows,
  );
}

/**
 * Estimated Lambda cold start of each function: the published hello-world median plus this
 * run's init CPU time over the hello-world reference's, carried over with a CPU factor range.
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
      const delta = c.medianCpuMs - hello.medianCpuMs;
      const overBaseline = c.medianCpuMs - baseline.medianCpuMs;
      return [
        c.name,
        `${fmt(c.medianCpuMs)} ms`,
        `${fmt(delta)} ms`,
        c.name === 'baseline' ? '—' : `${overBaseline >= 0 ? '+' : ''}${fmt(overBaseline)} ms`,
        `${Math.round(helloWorldMs + delta * factors[0])}–${Math.round(helloWorldMs + delta * factors[1])} ms`,
      ];
    });
  return table(
    ['Function', 'Import CPU here', 'Over hello-world', 'Over baseline', 'Estimated Lambda cold start'],
    rows,
  );
}

const BEGIN = '<!-- bench:results:begin -->';
const END = '<!-- bench:results:end -->';

/** Replaces the generated part of BENCHMARKS.md (between the markers), keeping the hand-written rest. */
export async function writeBenchmarksMd(path: string, generated: string): Promise<void> {
  const text = await readFile(path, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${path} has lost its ${BEGIN} … ${END} markers`);
  await writeFile(
    path,
    `${text.slice(0, begin)}${BEGIN}\n${generated.trim()}\n${END}${text.slice(end + END.length)}`,
  );
}
