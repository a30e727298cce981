import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * Runs `node [nodeOptions] <script> ...args` with exactly `env` and returns what it reported
 * through {@link reportResult}. A non-zero exit, a timeout or a missing result rejects.
 */
export function runJsonChild<T>(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  nodeOptions: readonly string[] = [],
): Promise<T> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  // Stdout goes to a file, not a pipe: a write to a pipe the parent is slow to drain (two busy
  // cores) would block or queue, and the functions' log line would cost what the scheduler decides.
  const stdoutPath = join(tmpdir(), `wallet-catalog-bench-${randomUUID()}.log`);
  const stdoutFd = openSync(stdoutPath, 'w');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeOptions, path, ...args], {
      env,
      stdio: ['ignore', stdoutFd, 'pipe', 'pipe'],
    });
    closeSync(stdoutFd);
    let stderr = '';
    let result = '';
    const [, , stderrStream, results] = child.stdio as unknown as [null, null, Readable, Readable];
    stderrStream.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    results.setEncoding('utf8').on('data', (chunk: string) => {
      result += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const failure = (why: string) => {
        const stdoutTail = readFileSync(stdoutPath, 'utf8').slice(-4000);
        return new Error(`${script} ${args.join(' ')} ${why}:\n${stderr}\n(stdout ends with:) ${stdoutTail}`);
      };
      try {
        if (code !== 0) return reject(failure(`exited with ${signal ?? code}`));
        resolve(JSON.parse(result) as T);
      } catch {
        reject(failure('reported no result'));
      } finally {
        rmSync(stdoutPath, { force: true });
      }
    });
  });
}
