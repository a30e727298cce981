import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

/**
 * File descriptor on which a benchmark child reports its result (the fourth of its stdio). Not
 * stdout: the functions write their request logs there, as on Lambda.
 */
const RESULT_FD = 3;

/** Reports a child's result to the parent (see {@link runJsonChild}). */
export function reportResult(result: unknown): void {
  writeSync(RESULT_FD, JSON.stringify(result));
}

export interface ChildOutcome<T> {
  readonly result: T;
  /** What the child wrote on stdout: its functions' request logs. */
  readonly stdoutBytes: number;
}

/** How much of a child's stdout is kept, for the message of a failed run. */
const STDOUT_TAIL_BYTES = 4_000;

/**
 * Runs `node [nodeOptions] <script> ...args` with exactly `env` and returns what it reported
 * through {@link reportResult}. A non-zero exit, a timeout or a missing result rejects.
 *
 * The child's stdout is a pipe this process drains, as the runtime's stdout is on Lambda, read by
 * its log agent: a function's request line costs what a pipe write costs there, not a write to a
 * file on this machine's disk (about twice as much here). This process only waits meanwhile.
 */
export function runJsonChild<T>(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  options: { nodeOptions?: readonly string[]; timeoutMs?: number } = {},
): Promise<ChildOutcome<T>> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeOptions ?? []), path, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let stdoutBytes = 0;
    let stdoutTail = Buffer.alloc(0);
    let stderr = '';
    let result = '';
    const [, stdoutStream, stderrStream, results] = child.stdio as unknown as [
      null,
      Readable,
      Readable,
      Readable,
    ];
    stdoutStream.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      stdoutTail = Buffer.concat([stdoutTail, chunk]).subarray(-STDOUT_TAIL_BYTES);
    });
    stderrStream.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    results.setEncoding('utf8').on('data', (chunk: string) => {
      result += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const failure = (why: string) =>
        new Error(`${script} ${args.join(' ')} ${why}:\n${stderr}\n(stdout ends with:) ${stdoutTail}`);
      if (code !== 0) return reject(failure(`exited with ${signal ?? code}`));
      try {
        resolve({ result: JSON.parse(result) as T, stdoutBytes });
      } catch {
        reject(failure('reported no result'));
      }
    });
  });
}
