/**
 * One sample of `bench/alternatives.ts`: `node bench/alternatives-child.ts <bundle URL> <reference
 * bundle URL> <batches> <batch size>`. Times the import of the bundle first (wall and CPU time) (as `cold-child.ts`
 * does: nothing else loaded before it), then loads the reference bundle and times batches of
 * invocations of both, alternately, reporting the per-batch difference.
 */
// Already loaded by Node's own bootstrap: it makes the timed import no cheaper.
import { writeSync } from 'node:fs';

type Handler = (event: unknown) => Promise<unknown>;

const [url, referenceUrl, batchesArg, sizeArg] = process.argv.slice(2);
if (!url || !referenceUrl)
  throw new Error('usage: alternatives-child.ts <bundle> <reference> <batches> <size>');

const started = performance.now();
const cpuBefore = process.cpuUsage();
const { handler } = (await import(url)) as { handler: Handler };
const importMs = performance.now() - started;
// CPU time too: on a loaded machine the wall time mostly measures the wait for a core.
const cpu = process.cpuUsage(cpuBefore);
const importCpuMs = (cpu.user + cpu.system) / 1000;

const batches = Number(batchesArg ?? 0);
const size = Number(sizeArg ?? 200);
const overUs: number[] = [];
if (batches > 0) {
  const reference = ((await import(referenceUrl)) as { handler: Handler }).handler;
  let sequence = 0;
  const event = () => ({
    requestId: `c0ffee00-${(sequence++).toString(16).padStart(8, '0')}`,
    sub: 'bench-caller',
  });
  const time = async (fn: Handler) => {
    const events = Array.from({ length: size }, event);
    const t0 = performance.now();
    for (let i = 0; i < size; i++) await fn(events[i]);
    return ((performance.now() - t0) * 1000) / size;
  };
  const warmUntil = performance.now() + 500;
  while (performance.now() < warmUntil) {
    await time(handler);
    await time(reference);
  }
  for (let batch = 0; batch < batches; batch++) {
    const pair = batch % 2 === 0 ? [handler, reference] : [reference, handler];
    const [first, second] = [await time(pair[0] as Handler), await time(pair[1] as Handler)];
    overUs.push(batch % 2 === 0 ? first - second : second - first);
  }
}
writeSync(3, JSON.stringify({ importMs, importCpuMs, overUs }));
process.stdout.write('', () => process.exit(0));
