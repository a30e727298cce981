/**
 * One cold start: `node bench/cold-child.ts <bundle URL> time|check`, in a fresh process whose
 * environment the parent set. `time` measures the import and nothing else; `check` (never timed)
 * watches for network use during init and just after it.
 */
// Already loaded by Node's own bootstrap, unlike the helpers of ./child.ts, which would preload
// builtins the bundles then find ready.
import { writeSync } from 'node:fs';
import type { Socket } from 'node:net';

/** Same channel as `reportResult` of ./child.ts. */
const reportResult = (result: unknown) => writeSync(3, JSON.stringify(result));

const [url, mode] = process.argv.slice(2);
if (url === undefined || (mode !== 'time' && mode !== 'check')) {
  throw new Error('usage: cold-child.ts <bundle URL> time|check');
}

if (mode === 'time') {
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const module = (await import(url)) as { handler?: unknown };
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  reportResult({ ms, cpuMs: (cpu.user + cpu.system) / 1000, handler: typeof module.handler === 'function' });
  // Whatever init left open (a keep-alive agent, a timer) must not hold the run up.
  process.exit(0);
} else {
  // Loaded only in this mode: a builtin loaded before the timed import would make it cheaper.
  const net = await import('node:net');
  let fetches = 0;
  let connects = 0;
  const realFetch = globalThis.fetch;
  globalThis.fetch = (...args: Parameters<typeof fetch>) => {
    fetches++;
    return realFetch(...args);
  };
  const realConnect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    connects++;
    return (realConnect as (...a: unknown[]) => Socket).apply(this, args);
  } as typeof realConnect;
  const module = (await import(url)) as { handler?: unknown };
  // Lazy work that init merely schedules (a timer, a promise) would surface here.
  await new Promise((resolve) => setTimeout(resolve, 100));
  reportResult({ fetches, connects, handler: typeof module.handler === 'function' });
  process.exit(0);
}
