/**
 * The record a running local stack leaves at `<stateDir>/stack-<port>.json`: how other local tools
 * (`npm run wallet:fund`, the bench, tests) find it without importing the gateway.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultPort } from './issuer.ts';
import { localStateDir } from './state.ts';

/** What `<stateDir>/stack-<port>.json` holds while a stack runs. */
export interface RunningStack {
  readonly baseUrl: string;
  readonly pid: number;
  /** The DynamoDB the stack's functions use (and tools should): the conflict proxy when `conflicts`. */
  readonly dynamodbEndpoint: string;
  /** DynamoDB Local itself, past the proxy. */
  readonly dynamodbLocalEndpoint: string;
  /** Whether the proxy raises DynamoDB's transaction conflicts; its touch report is at `<dynamodbEndpoint>/proxy/touches`. */
  readonly conflicts: boolean;
  readonly dynamodbPid?: number;
  readonly env: Readonly<Record<string, string>>;
}

/** Where the stack on `port` records itself. */
export function stackRecordPath(stateDir: string, port: number): string {
  return join(stateDir, `stack-${port}.json`);
}

/**
 * The local stack running on `port` as its `stack-<port>.json` record describes it, or
 * `undefined` when none runs there (no record, or one left by a process that is gone).
 */
export async function readRunningStack(
  port: number = defaultPort(),
  stateDir: string = localStateDir(),
): Promise<RunningStack | undefined> {
  let text: string;
  try {
    text = await readFile(stackRecordPath(stateDir, port), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const record = JSON.parse(text) as RunningStack;
  return isAlive(record.pid) ? record : undefined;
}

/** Writes the record atomically and returns what removes it again (unless another process took the port since). */
export async function writeStackRecord(path: string, record: RunningStack): Promise<() => Promise<void>> {
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`);
  await rename(temp, path);
  return () => removeOwnRecord(path, record.pid);
}

async function removeOwnRecord(path: string, pid: number): Promise<void> {
  try {
    const record = JSON.parse(await readFile(path, 'utf8')) as RunningStack;
    if (record.pid === pid) await rm(path, { force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
