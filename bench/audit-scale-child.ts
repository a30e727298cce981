/**
 * One audit for bench/audit-scale.ts, in a process of its own: prints its time, what it scanned
 * and kept, and (with `--expose-gc` and memory sampling on) its peak live heap above the heap
 * before it began, sampled after a forced full collection every 100 ms.
 */
import { auditInWorkers } from '#infra/local/audit-workers.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';

const [endpoint, tableName, path, segments, sampleMemory] = process.argv.slice(2) as [
  string,
  string,
  'settled' | 'kept' | 'segmented',
  string,
  string,
];
const client = createDocumentClient({ endpoint });
const collect = (globalThis as { gc?: () => void }).gc;
const live = () => {
  collect?.();
  return process.memoryUsage().heapUsed;
};
const sampling = sampleMemory === 'true';
const before = sampling ? live() : 0;
let peak = 0;
const sampler = sampling ? setInterval(() => (peak = Math.max(peak, live() - before)), 100) : undefined;

const started = performance.now();
// Every movement settled (the ledger was written an hour ago), or every one kept; segmented: the
// children in worker threads, then the reducer, every movement settled (npm run wallet:audit -- --segments).
const report =
  path === 'segmented'
    ? await auditInWorkers(client, tableName, {
        segments: Number(segments),
        endpoint,
        settledBefore: new Date(),
      })
    : await auditTable(client, tableName, {
        segments: Number(segments),
        settledBefore: path === 'settled' ? new Date() : new Date(0),
      });
const ms = performance.now() - started;
clearInterval(sampler);
client.destroy();
process.stdout.write(
  JSON.stringify({
    ms,
    ...(sampling ? { peakLiveBytes: Math.max(peak, live() - before) } : {}),
    itemsKept: report.itemsKept,
    itemsScanned: report.itemsScanned,
    breaks: report.breaks.length,
  }),
);
