import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The README's quick start, run as a newcomer runs it: its first code block (`npm start`) in one
 * terminal, then every other command line of the section, in order, in a second one, where PORT is
 * not set, against a stack on a port that is not 3000. So the README cannot drift from what works.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

let stack: ChildProcess | undefined;
let stateDir: string | undefined;

afterAll(async () => {
  // The stack's whole process group, as a terminal's Ctrl-C reaches it; its pid is ours. Waited
  // for: a worker that left at once closed the stack's stdout pipe while it was stopping, and the
  // stack, writing its last lines into the closed pipe, never exited (and spun a core for the rest
  // of the run, which slowed every test after it).
  if (stack?.pid !== undefined && stack.exitCode === null && stack.signalCode === null) {
    const exited = once(stack, 'exit');
    process.kill(-stack.pid, 'SIGTERM');
    const stopped = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
    if (!stopped) process.kill(-stack.pid, 'SIGKILL');
  }
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/** The ```sh blocks of the README's section `title`, in order. */
function shellBlocksOf(title: string): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

/** The environment of a fresh terminal in the repository: no PORT, the test's own state directory. */
function terminalEnv(): NodeJS.ProcessEnv {
  const { PORT: _port, DYNAMODB_LOCAL_PATH: _path, ...env } = process.env;
  return { ...env, LOCAL_STATE_DIR: stateDir };
}

describe("the README's quick start", () => {
  it('works as written, in two terminals, with PORT unset in the second', { timeout: 180_000 }, async () => {
    const [first, ...rest] = shellBlocksOf('Quick start');
    expect(first?.trim()).toBe('npm start');
    expect(rest.length).toBeGreaterThan(0);

    // Terminal 1: `npm start`, on any free port (3000 may be a developer's), named in the banner:
    // one found free here could be taken before the gateway binds it.
    stateDir = await mkdtemp(join(tmpdir(), 'readme-quick-start-'));
    stack = spawn('npm', ['start'], {
      cwd: repoRoot,
      env: { ...terminalEnv(), PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let banner = '';
    const baseUrl = await new Promise<string>((resolve, reject) => {
      stack?.stdout?.on('data', (chunk: Buffer) => {
        banner += chunk.toString();
        const url = /Local API ready at (http:\/\/\S+)/.exec(banner)?.[1];
        if (url) resolve(url);
      });
      stack?.stderr?.on('data', (chunk: Buffer) => {
        banner += chunk.toString();
      });
      stack?.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${banner}`)));
    });

    expect(new URL(baseUrl).port).not.toBe('3000');

    // Terminal 2: the rest, as one shell session; the README's URLs name the default port.
    const script = rest.join('\n').replaceAll(DEFAULT_BASE_URL, baseUrl);
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
      (resolve) => {
        execFile(
          'bash',
          ['-euo', 'pipefail', '-c', script],
          { cwd: repoRoot, env: terminalEnv(), maxBuffer: 10 * 1024 * 1024 },
          (error, out, err) =>
            resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out, stderr: err }),
        );
      },
    );
    expect(code, `${stderr}\n${stdout}`).toBe(0);

    // Each command found the one stack by itself, and said so.
    expect(stderr).toContain(`the local stack at ${baseUrl} (the only one running`);
    expect(stdout).not.toMatch(/"status":40[13]/);
    // Funded, paid, looked at, and the books balance.
    expect(stdout).toMatch(/"toAddress":"bob","amount":12\.34,"currency":"USD","status":"completed"/);
    expect(stdout).toContain('"address":"alice","balance":87.66');
    expect(stdout).toMatch(/"kind":"deposit"/);
    expect(stdout).toContain('"name":"doggie"');
    expect(stdout).toContain('"verdict":"the books balance"');
  });
});
