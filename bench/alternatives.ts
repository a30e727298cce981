/**
 * `node bench/alternatives.ts [--rounds N] [--batches N] [name ...]`: what a library (or the code it
 * would replace) costs a function, measured as `npm run bench` measures the functions. Each entry
 * of `bench/alternatives/` (and the baseline, with and without the `node:http` alias) is built with
 * `esbuildOptions()` of `infra/bundling.ts`; bundle bytes are those of `index.mjs`. Cold init: rounds
 * of fresh processes in rotating order, each entry's import over the baseline's of the same round
 * (median and 90 % interval of those ratios). Warm: in each process, batches of invocations of the
 * entry and of the plain baseline alternately; the median per-invocation difference. The figures
 * behind docs/decisions/.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { esbuildOptions } from '#infra/bundling.ts';
import type { AlternativeEvent } from './alternatives/event.ts';
import { runJsonChild } from './child.ts';
import { median, medianInterval } from './stats.ts';
import { BASELINE, FUNCTIONS, lambdaNodeOptions, targetEnvironment } from './targets.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = join(ROOT, '.bench', 'alternatives');

interface Alternative {
  readonly name: string;
  readonly entry: string;
  /** Built without the `node:http` alias to `infra/shims/node-http.cjs`. */
  readonly withoutShim?: boolean;
  /** Timed warm too: the handler takes an {@link AlternativeEvent}. The functions are not. */
  readonly warm?: boolean;
}

const entry = (file: string) => join(ROOT, 'bench', 'alternatives', file);
const ALTERNATIVES: readonly Alternative[] = [
  { name: 'baseline', entry: BASELINE.entry },
  { name: 'baseline-without-shim', entry: BASELINE.entry, withoutShim: true },
  { name: 'get-balance', entry: join(ROOT, 'functions', 'get-balance', 'handler.ts') },
  {
    name: 'get-balance-without-shim',
    entry: join(ROOT, 'functions', 'get-balance', 'handler.ts'),
    withoutShim: true,
  },
  { name: 'telemetry-own', entry: entry('telemetry-own.ts'), warm: true },
  { name: 'telemetry-powertools', entry: entry('telemetry-powertools.ts'), warm: true },
  { name: 'telemetry-powertools-logger', entry: entry('telemetry-powertools-logger.ts'), warm: true },
  { name: 'telemetry-powertools-metrics', entry: entry('telemetry-powertools-metrics.ts'), warm: true },
  { name: 'tracing-xray-udp', entry: entry('tracing-xray-udp.ts'), warm: true },
  { name: 'tracing-otel-api', entry: entry('tracing-otel-api.ts'), warm: true },
  { name: 'tracing-otel-sdk', entry: entry('tracing-otel-sdk.ts'), warm: true },
  { name: 'time-iso', entry: entry('time-iso.ts'), warm: true },
  { name: 'time-cached', entry: entry('time-cached.ts'), warm: true },
];

const { values, positionals } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, batches: { type: 'string', default: '20' } },
  allowPositionals: true,
});
const rounds = Number(values.rounds);
const batches = Number(values.batches);
const chosen = ALTERNATIVES.filter(
  (a) => a.name === 'baseline' || positionals.length === 0 || positionals.includes(a.name),
);

await rm(OUT_DIR, { recursive: true, force: true });
await mkdir(OUT_DIR, { recursive: true });
const built = await Promise.all(
  chosen.map(async (alternative) => {
    const file = join(OUT_DIR, alternative.name, 'index.mjs');
    const options = esbuildOptions(alternative.entry, file);
    await build({ ...options, ...(alternative.withoutShim ? { alias: {} } : {}), logLevel: 'error' });
    const code = await readFile(file);
    return { ...alternative, url: pathToFileURL(file).href, raw: code.length, gzip: gzipSync(code).length };
  }),
);
const baseline = built.find((b) => b.name === 'baseline') as (typeof built)[number];

const getBalance = FUNCTIONS.find((f) => f.name === 'get-balance');
if (!getBalance) throw new Error('No get-balance function');
const env = {
  // get-balance's environment serves every entry (the others read at most STAGE of it).
  ...targetEnvironment(getBalance, { port: 0, jwksUrl: 'http://127.0.0.1:9/jwks.json' }, 1024),
  // As Lambda sets it with active tracing: the X-Ray middleware installs itself only then.
  AWS_XRAY_DAEMON_ADDRESS: '169.254.79.129:2000',
};
const importMs = new Map<string, number[]>(built.map((b) => [b.name, []]));
const importCpuMs = new Map<string, number[]>(built.map((b) => [b.name, []]));
const overUs = new Map<string, number[]>(built.map((b) => [b.name, []]));
for (let round = -1; round < rounds; round++) {
  const shift = Math.max(round, 0) % built.length;
  for (const alternative of [...built.slice(shift), ...built.slice(0, shift)]) {
    const { result } = await runJsonChild<{ importMs: number; importCpuMs: number; overUs: number[] }>(
      'alternatives-child.ts',
      [alternative.url, baseline.url, String(round >= 0 && alternative.warm ? batches : 0), '200'],
      env,
      { nodeOptions: lambdaNodeOptions(1024) },
    );
    if (round < 0) continue;
    importMs.get(alternative.name)?.push(result.importMs);
    importCpuMs.get(alternative.name)?.push(result.importCpuMs);
    overUs.get(alternative.name)?.push(...result.overUs);
  }
  process.stderr.write(`${round + 1} `);
}
process.stderr.write('\n');

/** Median and 90 % interval of an entry's per-round ratios to the baseline's sample of the same round. */
function pairedRatio(samples: Map<string, number[]>, name: string): string {
  const base = samples.get('baseline') ?? [];
  const ratios = (samples.get(name) ?? []).map((ms, i) => ms / (base[i] ?? Number.NaN));
  const [low, high] = medianInterval(ratios);
  return `${median(ratios).toFixed(3)} (${low.toFixed(2)}–${high.toFixed(2)})`;
}
const rows = built.map((b) => {
  const warm = overUs.get(b.name) ?? [];
  return [
    b.name,
    `${(b.raw / 1024).toFixed(1)} / ${(b.gzip / 1024).toFixed(1)} KiB`,
    `${b.raw - baseline.raw >= 0 ? '+' : ''}${((b.raw - baseline.raw) / 1024).toFixed(1)} KiB (${(b.raw / baseline.raw).toFixed(3)} ×)`,
    `${median(importMs.get(b.name) ?? []).toFixed(1)} ms`,
    pairedRatio(importMs, b.name),
    `${median(importCpuMs.get(b.name) ?? []).toFixed(1)} ms`,
    pairedRatio(importCpuMs, b.name),
    warm.length ? `${median(warm).toFixed(2)} µs` : '—',
  ];
});
const header = [
  'Entry',
  'Bundle raw / gzip',
  'Over baseline',
  'Import p50 (wall)',
  'Wall × baseline (90 % CI)',
  'Import p50 (CPU)',
  'CPU × baseline (90 % CI)',
  'Warm over baseline',
];
const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
process.stdout.write(
  `${[line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')}\n\n${rounds} rounds, ${batches} batches of 200 per process; ${new Date().toISOString()}\n`,
);
