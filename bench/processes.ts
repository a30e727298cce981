/**
 * The processes the end-to-end and scenario benchmarks run beside themselves: the local stack, as
 * `npm start` runs it, and the floor server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs the local stack as `npm start` does, quiet, and resolves once its banner says it is ready.
 * Its stdout, where the functions log every request, and its stderr go to a file as in the warm
 * benchmark: a pipe drained by this busy process would make each line cost what the scheduler
 * decides, and wake this process, which measures the floor too, for nothing.
 */
export async function startGateway(
  port: number,
  stateDir: string,
  nodeOptions: readonly string[],
  startOptions: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<ChildProcess> {
  const logPath = join(stateDir, 'gateway.log');
  const log = await open(logPath, 'w');
  // Each worker sends thousands of requests with one token: the per-caller limit would refuse them.
  const args = [
    ...nodeOptions,
    'infra/local/start.ts',
    '--quiet',
    '--caller-rate-limit',
    'off',
    ...startOptions,
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...(process.env.HOME ? { HOME: process.env.HOME } : {}),
      ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}),
      // For comparing DynamoDB Local's JVM options (infra/local/dynamodb-local.ts).
      ...(process.env.DYNAMODB_LOCAL_JAVA_OPTIONS === undefined
        ? {}
        : { DYNAMODB_LOCAL_JAVA_OPTIONS: process.env.DYNAMODB_LOCAL_JAVA_OPTIONS }),
      PORT: String(port),
      LOCAL_STATE_DIR: stateDir,
      ...env,
    },
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  const deadline = Date.now() + 120_000;
  try {
    for (;;) {
      const banner = (await readFile(logPath, 'utf8')).slice(0, 20_000);
      if (banner.includes('Local API ready at')) {
        if (banner.includes('WARNING:')) throw new Error(`A function failed to load:\n${banner}`);
        return child;
      }
      if (child.exitCode !== null)
        throw new Error(`The local stack exited with ${child.exitCode}:\n${banner}`);
      if (Date.now() > deadline) throw new Error(`The local stack was not ready in 120 s:\n${banner}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stopGateway(child);
    throw error;
  }
}

/** Starts `bench/floor-server.ts` with the local stack's environment; resolves once it listens. */
export async function startFloorServer(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'floor-server.ts'), String(port)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stdout = child.stdout as NodeJS.ReadableStream;
  const ready = new Promise<void>((resolve, reject) => {
    stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`The floor server exited with ${code}`)));
  });
  const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    await ready;
  } finally {
    clearTimeout(timeout);
  }
  // Nothing more is printed; not reading the pipe any further costs the server nothing.
  return child;
}

/** SIGTERM makes `start.ts` stop the server and DynamoDB Local before it exits. */
export async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}
