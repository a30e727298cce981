/**
 * What `NODE_OPTIONS=--enable-source-maps` costs a cold start, measured with the local runner
 * (`infra/local/invoke/pool.ts`): each function bundle built as CDK builds it, then cold-started
 * in fresh execution environments, interleaved, in three variants: the map beside the bundle
 * without a `sourceMappingURL` comment and no flag (before), the same with the flag, and a linked
 * map (`sourceMappingURL` comment) with the flag (what makes traces readable). The event is
 * `null`, which the handlers fail on with a TypeError whose trace the runtime formats: the one
 * place a source map is decoded. Prints, for each variant, the median Init Duration and first
 * (cold) invocation Duration, and the median of the per-round differences to the first variant
 * (paired, since a loaded machine drifts), plus the top frame of the trace.
 *
 *   node scripts/invoke-cold-start.ts [rounds=15] [function dir=send-money]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions, PROJECT_ROOT } from '#infra/bundling.ts';
import { createBundlePool } from '#infra/local/invoke/pool.ts';

const rounds = Number(process.argv[2] ?? 15);
const functionDir = process.argv[3] ?? 'send-money';
const dir = mkdtempSync(join(tmpdir(), 'invoke-cold-start-'));
const entry = join(PROJECT_ROOT, 'functions', functionDir, 'handler.ts');

const variants = [
  { name: 'external map, no flag', sourcemap: 'external', flag: false },
  { name: 'external map, --enable-source-maps', sourcemap: 'external', flag: true },
  { name: 'linked map, --enable-source-maps', sourcemap: 'linked', flag: true },
] as const;

try {
  for (const variant of variants) {
    const outdir = join(dir, variant.sourcemap);
    await build({
      ...esbuildOptions(entry, join(outdir, 'index.mjs')),
      sourcemap: variant.sourcemap,
      logLevel: 'silent',
    });
  }
  const samples = new Map<string, { init: number[]; duration: number[]; frame?: string }>(
    variants.map((v) => [v.name, { init: [], duration: [] }]),
  );
  // A first round warms the page cache and is dropped.
  for (let round = -1; round < rounds; round++) {
    for (const variant of variants) {
      const pool = createBundlePool(
        {
          functionName: functionDir,
          taskRoot: join(dir, variant.sourcemap),
          handler: 'index.handler',
          runtime: 'nodejs24.x',
          memorySizeMb: 1024,
          timeoutSeconds: 10,
          environment: {
            // Enough configuration to load; the invocation itself answers 4xx without DynamoDB.
            PETS_TABLE_NAME: 'pets',
            WALLETS_TABLE_NAME: 'wallets',
            CURRENCY: 'USD',
            CURRENCY_DECIMALS: '2',
            MAX_TRANSFER_MINOR: '100000000',
            IDEMPOTENCY_TTL_SECONDS: '86400',
            DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
            LOG_LEVEL: 'SILENT',
            METRICS_DISABLED: 'true',
            ...(variant.flag ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
          },
          region: 'us-east-1',
          accountId: '000000000000',
        },
        { onLog: () => {} },
      );
      const result = await pool.invoke(null);
      await pool.close();
      if (round >= 0) {
        const sample = samples.get(variant.name);
        sample?.init.push(result.report.initDurationMs ?? Number.NaN);
        sample?.duration.push(result.report.durationMs);
        if (sample && !result.ok) sample.frame = result.error.trace?.[1]?.trim() ?? '';
      }
    }
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  };
  console.log(`${functionDir}, ${rounds} cold starts each (median):`);
  const base = samples.get(variants[0].name) ?? { init: [], duration: [] };
  const diff = (values: number[], baseline: number[]) => median(values.map((v, i) => v - (baseline[i] ?? 0)));
  for (const [name, { init, duration, frame }] of samples) {
    console.log(
      `  ${name.padEnd(36)} Init Duration ${median(init).toFixed(1)} ms (${diff(init, base.init).toFixed(1)} paired), first Duration ${median(duration).toFixed(1)} ms (${diff(duration, base.duration).toFixed(1)} paired)`,
    );
    console.log(`    top frame: ${frame}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
