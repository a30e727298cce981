/**
 * `npm run bench:audit [-- --wallets 2000,8000 --movements 10 --segments 4]`: the ledger audit's
 * memory and time by ledger size, on DynamoDB Local. For each size it writes a consistent ledger
 * (bench/audit-ledger.ts), then audits it in a fresh process twice over: once with every movement
 * settled (the fingerprint path, the steady state of the daily audit) and once with every movement
 * kept (the item-by-item path, which movements created during the last minutes take), each run
 * once for its peak live heap (a forced collection every 100 ms, so slower) and once for time.
 * With `--segmented 1,2,4,8`, each ledger is also audited as `npm run wallet:audit -- --segments N`
 * does (a child per segment in a worker thread, then the reducer), every movement settled, once
 * per count, for its time; `--paths ''` skips the two in-process paths.
 * Prints Markdown tables (BENCHMARKS.md, "Ledger audit"); exits 1 if an audit finds a break.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { LOCAL_AWS_ENV, localClient, startDynamoDbLocal } from '#infra/local/dynamodb-local.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { createTableInput, tables } from '#shared/dynamodb/tables.ts';
import { ledgerItems, writeItems } from './audit-ledger.ts';

const { values } = parseArgs({
  options: {
    wallets: { type: 'string', default: '2000,8000' },
    movements: { type: 'string', default: '10' },
    segments: { type: 'string', default: '4' },
    segmented: { type: 'string', default: '' },
    paths: { type: 'string', default: 'settled,kept' },
  },
  strict: true,
});
const sizes = (values.wallets as string).split(',').map(Number);
const movements = Number(values.movements);
const segments = Number(values.segments);
const segmentCounts = (values.segmented as string).split(',').filter(Boolean).map(Number);
const paths = (values.paths as string).split(',').filter(Boolean) as ('settled' | 'kept')[];
const PATHS = { settled: 'fingerprints (settled)', kept: 'item by item (kept)' } as const;
const progress = (message: string) => process.stderr.write(`[bench:audit] ${message}\n`);
const child = fileURLToPath(new URL('./audit-scale-child.ts', import.meta.url));

interface Measured {
  readonly peakLiveBytes?: number;
  readonly ms: number;
  readonly itemsKept: number;
  readonly itemsScanned: number;
  readonly breaks: number;
}

async function audit(
  endpoint: string,
  tableName: string,
  path: 'settled' | 'kept' | 'segmented',
  memory: boolean,
  count = segments,
) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...(memory ? ['--expose-gc'] : []), child, endpoint, tableName, path, String(count), String(memory)],
    { env: { ...process.env, ...LOCAL_AWS_ENV }, maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as Measured;
}

const dynamo = await startDynamoDbLocal();
Object.assign(process.env, LOCAL_AWS_ENV);
const client = createDocumentClient({ endpoint: dynamo.endpoint });
const rows: string[] = [];
const segmentedRows: string[] = [];
const peaks: Record<'settled' | 'kept', number[]> = { settled: [], kept: [] };
let broken = false;
try {
  for (const wallets of sizes) {
    const tableName = `audit-bench-${wallets}`;
    const admin = localClient(dynamo.endpoint);
    await admin.send(new CreateTableCommand(createTableInput(tableName, tables.wallets)));
    admin.destroy();
    const started = performance.now();
    const items = await writeItems(
      client,
      tableName,
      ledgerItems(wallets, movements, new Date(Date.now() - 3_600_000).toISOString()),
    );
    progress(`${wallets} wallets: ${items} items written in ${Math.round(performance.now() - started)} ms`);
    for (const count of segmentCounts) {
      const timed = await audit(dynamo.endpoint, tableName, 'segmented', false, count);
      broken ||= timed.breaks > 0;
      segmentedRows.push(
        `| ${wallets} | ${timed.itemsScanned} | ${count} | ${(timed.ms / 1000).toFixed(1)} s | ${Math.round(timed.itemsScanned / (timed.ms / 1000))} |`,
      );
      progress(`${segmentedRows.at(-1)} breaks: ${timed.breaks}`);
    }
    for (const path of paths) {
      const memory = await audit(dynamo.endpoint, tableName, path, true);
      if (memory.breaks > 0) progress(`${path}: ${memory.breaks} breaks`);
      const timed = await audit(dynamo.endpoint, tableName, path, false);
      broken ||= memory.breaks > 0 || timed.breaks > 0;
      const peak = memory.peakLiveBytes as number;
      peaks[path].push(peak);
      rows.push(
        `| ${wallets} | ${items} | ${PATHS[path]} | ${timed.itemsKept} | ${(peak / 2 ** 20).toFixed(1)} MB | ${(timed.ms / 1000).toFixed(1)} s |`,
      );
      progress(rows.at(-1) as string);
    }
  }
} finally {
  client.destroy();
  await dynamo.stop();
}
process.stdout.write(
  [
    `Ledger audit, ${movements} movements per wallet, ${segments} segments, DynamoDB Local:`,
    '',
    '| Wallets | Items | Path | Items kept | Peak live heap | Time |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...marginal(),
    '',
    ...(segmentCounts.length === 0
      ? []
      : [
          'Segmented (workers, then the reducer), every movement settled:',
          '',
          '| Wallets | Items | Segments | Time | Items/s |',
          '| --- | --- | --- | --- | --- |',
          ...segmentedRows,
          '',
        ]),
  ].join('\n'),
);
process.exit(broken ? 1 : 0);

/** Each path's live heap per wallet more, between the smallest and the largest ledger. */
function marginal(): string[] {
  if (sizes.length < 2 || paths.length < 2) return [];
  const span = (sizes.at(-1) as number) - (sizes[0] as number);
  return (['settled', 'kept'] as const).map((path) => {
    const grown = (peaks[path].at(-1) as number) - (peaks[path][0] as number);
    return `- ${PATHS[path]}: ${Math.round(grown / span)} B of live heap per wallet more (${sizes[0]} → ${sizes.at(-1)} wallets)`;
  });
}
