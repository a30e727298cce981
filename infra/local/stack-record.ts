/**
 * The record a running local stack leaves at `<stateDir>/stack-<port>.json`: how other local tools
 * (`npm run wallet:fund`, the bench, tests) find it without importing the gateway.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultPort, givenPort } from './issuer.ts';
import { localStateDir } from './state.ts';

/** What `<stateDir>/stack-<port>.json` holds while a stack runs. */
export interface RunningStack {
  readonly baseUrl: string;
  readonly pid: number;
  /** The DynamoDB the stack's functions use (and tools should): the conflict proxy when `conflicts`. */
  readonly dynamodbEndpoint: string;
  /** DynamoDB Local itself, past the proxy. */
  readonly dynamodbLocalEndpoint: string;
  /** The local S3 (s3rver) of the image functions; absent in the record of an older stack. */
  readonly s3Endpoint?: string;
  /** Whether the proxy raises DynamoDB's transaction conflicts; its touch report is at `<dynamodbEndpoint>/proxy/touches`. */
  readonly conflicts: boolean;
  readonly dynamodbPid?: number;
  readonly env: Readonly<Record<string, string>>;
}

/** Where the stack on `port` records itself. */
export function stackRecordPath(stateDir: string, port: number): string {
  return join(stateDir, `stack-${port}.json`);
}

const RECORD_NAME = /^stack-(\d+)\.json$/;

/**
 * The local stack running on `port` as its `stack-<port>.json` record describes it, or
 * `undefined` when none runs there. A record left by a process that is gone (killed outright,
 * or by a machine that rebooted) is no stack: it is removed here, so that nothing trusts it.
 */
export async function readRunningStack(
  port: number = defaultPort(),
  stateDir: string = localStateDir(),
): Promise<RunningStack | undefined> {
  const path = stackRecordPath(stateDir, port);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const record = JSON.parse(text) as RunningStack;
  if (isAlive(record.pid)) return record;
  removeOwnRecordSync(path, record.pid);
  return undefined;
}

/** Every local stack that runs with its record in `stateDir`, by port; stale records are removed on the way. */
export async function listRunningStacks(stateDir: string = localStateDir()): Promise<RunningStack[]> {
  const names = await readdir(stateDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const ports = names
    .map((name) => RECORD_NAME.exec(name)?.[1])
    .filter((port): port is string => port !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const stacks = await Promise.all(ports.map((port) => readRunningStack(port, stateDir)));
  return stacks.filter((stack): stack is RunningStack => stack !== undefined);
}

/** The stack a local command uses, and why that one; or why there is none to use. */
export type StackChoice =
  | { readonly stack: RunningStack; readonly port: number; readonly reason: string }
  | {
      readonly stack: undefined;
      readonly port: number | undefined;
      readonly problem: string;
      /** With `PORT` unset, the stacks that do run: none, or too many to guess. */
      readonly running: readonly RunningStack[];
    };

/**
 * The running stack a local command (`npm run token`, `invoke`, and the wallet commands through
 * scripts/wallets-table.ts) should use: the one on `PORT` when it is set; otherwise the only one
 * running. When several run, none is guessed: the problem names them all and asks for `PORT`. A
 * command that works without a stack (`token`, `invoke`) falls back to `port` (PORT's default)
 * itself.
 */
export async function chooseRunningStack(
  options: { readonly port?: number | undefined; readonly stateDir?: string } = {},
): Promise<StackChoice> {
  const stateDir = options.stateDir ?? localStateDir();
  const port = options.port ?? givenPort();
  if (port !== undefined) {
    const stack = await readRunningStack(port, stateDir);
    return stack
      ? { stack, port, reason: `PORT=${port}` }
      : {
          stack,
          port,
          problem: `No local stack runs on port ${port} (PORT=${port}): start one with \`PORT=${port} npm start\`.`,
          running: [],
        };
  }
  const stacks = await listRunningStacks(stateDir);
  const [only] = stacks;
  if (stacks.length === 1 && only) {
    return { stack: only, port: portOf(only), reason: 'the only one running; PORT picks another' };
  }
  if (stacks.length === 0) {
    return {
      stack: undefined,
      port: undefined,
      problem: 'No local stack is running: start one with `npm start`.',
      running: stacks,
    };
  }
  return {
    stack: undefined,
    port: undefined,
    problem: `${stacks.length} local stacks are running, at ${stacks.map((s) => s.baseUrl).join(', ')}: say which with PORT, e.g. \`PORT=${portOf(only as RunningStack)} npm run …\`.`,
    running: stacks,
  };
}

/** The line a command prints to say which stack it used. */
export function describeChoice(choice: StackChoice & { readonly stack: RunningStack }): string {
  return `the local stack at ${choice.stack.baseUrl} (${choice.reason})`;
}

function portOf(stack: RunningStack): number {
  return Number(new URL(stack.baseUrl).port);
}

/** Writes the record atomically and returns what removes it again (unless another process took the port since). */
export async function writeStackRecord(path: string, record: RunningStack): Promise<() => Promise<void>> {
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`);
  await rename(temp, path);
  return () => removeOwnRecord(path, record.pid);
}

/**
 * Removes the record at `path` if `pid` wrote it, synchronously: also from an `exit` listener, so
 * that a stack that stops in a hurry (a second signal) still takes its record with it.
 */
export function removeOwnRecordSync(path: string, pid: number): void {
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as RunningStack;
    if (record.pid === pid) rmSync(path, { force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !(error instanceof SyntaxError)) throw error;
  }
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
