import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import type { TouchReportEntry } from '#infra/local/dynamodb-conflicts.ts';
import { localClient, startDynamoDbLocal } from '#infra/local/dynamodb-local.ts';
import { TOUCHES_PATH } from '#infra/local/dynamodb-proxy.ts';
import { signLocalToken } from '#infra/local/issuer.ts';
import { readRunningStack, stackRecordPath } from '#infra/local/stack-record.ts';
import { SCOPES } from '#shared/routes.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };
import { uniqueSub } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { uniquePetId } from './http.ts';

/** `npm start` as a developer runs it: its own process, its own DynamoDB Local, stopped by a signal. */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const started: ChildProcess[] = [];
/** Gateways started through npm: not this process's children, so killed by the pid they recorded. */
const gatewayPids: number[] = [];
const tempDirs: string[] = [];

afterEach(() => {
  // Whatever a failed test left running: the test's own processes only, by their handles and pids.
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const pid of gatewayPids.splice(0)) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
});

afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

interface Started {
  readonly child: ChildProcess;
  readonly port: number;
  readonly stateDir: string;
  readonly baseUrl: string;
  readonly output: () => string;
}

/** The functions' request log lines in the command's output, parsed (a line may carry a prefix). */
function requestLines(text: string): Record<string, unknown>[] {
  return text.split('\n').flatMap((line) => {
    const start = line.indexOf('{');
    if (start < 0 || !line.includes('"message":"request"')) return [];
    try {
      return [JSON.parse(line.slice(start)) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/**
 * Runs `node infra/local/start.ts` (or `npm start`, as a developer or a supervisor runs it) on
 * PORT=0 and waits for the line announcing its base URL, which names the port it took: a port
 * found free here could be taken by another test's process before the gateway binds it.
 */
async function startCommand(
  via: 'node' | 'npm' = 'node',
  extraArgs: readonly string[] = [],
  { detached = false } = {},
): Promise<Started> {
  const stateDir = await mkdtemp(join(tmpdir(), 'start-command-'));
  tempDirs.push(stateDir);
  const { DYNAMODB_LOCAL_PATH: _, ...env } = process.env;
  const [command, args] =
    via === 'npm'
      ? ['npm', ['start', '--silent', '--', ...extraArgs]]
      : [process.execPath, ['infra/local/start.ts', ...extraArgs]];
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...env, PORT: '0', LOCAL_STATE_DIR: stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as a terminal, a CI runner or `timeout` gives the command.
    detached,
  });
  started.push(child);
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /Local API ready at (http:\/\/\S+)/.exec(output)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) =>
      reject(new Error(`npm start exited with ${code} before it was ready:\n${output}`)),
    );
  });
  const port = Number(new URL(baseUrl).port);
  const running = await readRunningStack(port, stateDir);
  if (running) gatewayPids.push(running.pid);
  return { child, port, stateDir, baseUrl, output: () => output };
}

/** Whether a process runs; a zombie (dead, not yet reaped by its new parent) does not. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether anything accepts TCP connections at `endpoint`. */
async function answers(endpoint: string): Promise<boolean> {
  const { hostname, port } = new URL(endpoint);
  const socket = connect(Number(port), hostname);
  try {
    await once(socket, 'connect');
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

describe('npm start', () => {
  it('serves the API until SIGTERM, then stops DynamoDB Local and exits 0', { timeout: 90_000 }, async () => {
    const { child, port, stateDir, baseUrl, output } = await startCommand();
    expect(baseUrl).toBe(`http://127.0.0.1:${port}`);
    // The banner's token opens every route of the quick start, on the port taken (PORT=0 is none).
    expect(output()).toContain(
      `PORT=${port} LOCAL_STATE_DIR=${stateDir} npm run -s token -- --sub alice --scope "${Object.keys(SCOPES).join(' ')}"`,
    );

    const running = await readRunningStack(port, stateDir);
    expect(running).toMatchObject({ baseUrl, pid: child.pid });
    const javaPid = running?.dynamodbPid as number;
    const dynamodbEndpoint = running?.dynamodbEndpoint as string;
    expect(isRunning(javaPid)).toBe(true);

    const openapi = await fetch(`${baseUrl}/api/openapi.json`);
    expect(openapi.status).toBe(200);
    const token = await signLocalToken({ sub: uniqueSub(), scope: 'read:pets write:pets', port, stateDir });
    const pet = { id: uniquePetId(), name: 'doggie', photoUrls: [] };
    const added = await fetch(`${baseUrl}/api/v3/pet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(pet),
    });
    expect(added.status).toBe(200);
    const found = await fetch(`${baseUrl}/api/v3/pet/${pet.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await found.json()).toEqual(pet);

    // The functions reach DynamoDB Local through the conflict proxy, which counted the pet's write.
    expect(output()).toMatch(/Conflicts: +on, as DynamoDB on AWS/);
    expect(running?.conflicts).toBe(true);
    expect(running?.env.DYNAMODB_ENDPOINT).toBe(dynamodbEndpoint);
    expect(dynamodbEndpoint).not.toBe(running?.dynamodbLocalEndpoint);
    const touches = (await (await fetch(`${dynamodbEndpoint}${TOUCHES_PATH}`)).json()) as TouchReportEntry[];
    expect(touches.some((t) => t.table === running?.env.PETS_TABLE_NAME && t.writes === 1)).toBe(true);

    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    expect({ code, signal }, output()).toEqual({ code: 0, signal: null });
    // The functions' request lines carry a stage, as deployed (the templates set STAGE).
    expect(requestLines(output())).toContainEqual(expect.objectContaining({ stage: 'local' }));

    expect(isRunning(javaPid)).toBe(false);
    expect(await answers(dynamodbEndpoint)).toBe(false);
    expect(await answers(running?.dynamodbLocalEndpoint as string)).toBe(false);
    expect(await answers(baseUrl)).toBe(false);
    expect(existsSync(stackRecordPath(stateDir, port))).toBe(false);
  });

  it('--bundled serves from the bundles, marks cold starts, and counts them per function on stop', {
    timeout: 90_000,
  }, async () => {
    const { child, port, stateDir, baseUrl, output } = await startCommand('node', [
      '--bundled',
      '--dynamodb-endpoint',
      inject('env').DYNAMODB_ENDPOINT as string,
    ]);
    expect(output()).toMatch(/Functions: +bundled, from wallet-catalog-\S+-service in /);
    const token = await signLocalToken({ sub: uniqueSub(), scope: 'read:pets', port, stateDir });
    for (let i = 0; i < 2; i++) {
      const missing = await fetch(`${baseUrl}/api/v3/pet/${uniquePetId()}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(missing.status).toBe(404);
    }
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    // The first call started the authorizer's and the function's environments; the second found them warm.
    expect(output()).toMatch(
      /GET \/api\/v3\/pet\/\d+ 404 getPetById \d+ ms \S+ cold: authorizer,getPetById\n/,
    );
    expect(output()).toMatch(/GET \/api\/v3\/pet\/\d+ 404 getPetById \d+ ms \S+\n/);
    // Bundled, each function sees its template's STAGE, not the gateway's.
    expect(requestLines(output())).toContainEqual(expect.objectContaining({ stage: cdkJson.context.stage }));
    expect(output()).toMatch(/getPetById +2 invocations, 1 cold starts/);
    expect(output()).toMatch(/authorizer +1 invocations, 1 cold starts/);
  });

  it('--no-conflicts connects the functions to DynamoDB Local directly, and --help says so', {
    timeout: 90_000,
  }, async () => {
    const local = inject('env').DYNAMODB_ENDPOINT as string;
    const { child, port, stateDir, output } = await startCommand('node', [
      '--no-conflicts',
      '--dynamodb-endpoint',
      local,
    ]);
    expect(output()).toMatch(/Conflicts: +off \(--no-conflicts\)/);
    const running = await readRunningStack(port, stateDir);
    expect(running).toMatchObject({
      conflicts: false,
      dynamodbEndpoint: local,
      dynamodbLocalEndpoint: local,
    });
    expect(running?.env.DYNAMODB_ENDPOINT).toBe(local);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);

    const help = spawn(process.execPath, ['infra/local/start.ts', '--help'], { cwd: repoRoot });
    let usage = '';
    help.stdout.on('data', (chunk: Buffer) => {
      usage += chunk.toString();
    });
    expect(await once(help, 'exit')).toEqual([0, null]);
    expect(usage).toMatch(/--no-conflicts +let the functions reach DynamoDB Local directly/);
  });

  it('leaves no DynamoDB Local behind even when killed outright', { timeout: 90_000 }, async () => {
    const { child, port, stateDir } = await startCommand();
    const running = await readRunningStack(port, stateDir);
    const javaPid = running?.dynamodbPid as number;
    expect(isRunning(javaPid)).toBe(true);

    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;

    // The pid is the proof: by now its free port may already serve another test's DynamoDB Local.
    await eventually(() => !isRunning(javaPid), 60_000, 'DynamoDB Local stopped');
    // Its record is left behind, but no longer passes for a running stack.
    expect(await readRunningStack(port, stateDir)).toBeUndefined();
  });

  // SIGKILL: npm cannot pass anything on; the gateway notices it was orphaned.
  it.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)(
    'stops the gateway and DynamoDB Local and frees the port when npm itself gets %s',
    { timeout: 90_000 },
    async (signal) => {
      const { child, port, stateDir, baseUrl } = await startCommand('npm');
      const running = await readRunningStack(port, stateDir);
      const gatewayPid = running?.pid as number;
      const javaPid = running?.dynamodbPid as number;
      // What a supervisor or `kill PID` does: the signal reaches npm, not the process group.
      expect(gatewayPid).not.toBe(child.pid);
      expect(isRunning(javaPid)).toBe(true);

      process.kill(child.pid as number, signal);

      await eventually(
        () => !isRunning(gatewayPid) && !isRunning(javaPid),
        60_000,
        'the gateway and DynamoDB Local stopped',
      );
      expect(await answers(baseUrl)).toBe(false);
      expect(await answers(running?.dynamodbEndpoint as string)).toBe(false);
      expect(await readRunningStack(port, stateDir)).toBeUndefined();
    },
  );

  it('stops everything and removes its record when the whole process group gets SIGTERM', {
    timeout: 90_000,
  }, async () => {
    const { child, port, stateDir } = await startCommand('npm', [], { detached: true });
    const running = await readRunningStack(port, stateDir);
    const gatewayPid = running?.pid as number;
    const javaPid = running?.dynamodbPid as number;
    expect(isRunning(javaPid)).toBe(true);

    // What `timeout`, CI runners and process managers send: npm and the gateway both get it, and
    // npm passes it on once more.
    process.kill(-(child.pid as number), 'SIGTERM');

    await eventually(
      () => !isRunning(gatewayPid) && !isRunning(javaPid),
      60_000,
      'the gateway and DynamoDB Local stopped',
    );
    expect(existsSync(stackRecordPath(stateDir, port))).toBe(false);
  });

  it('stops in order and says so, with no error, when Ctrl+C signals the whole process group', {
    timeout: 90_000,
  }, async () => {
    const { child, port, stateDir, output } = await startCommand('npm', [], { detached: true });
    const running = await readRunningStack(port, stateDir);
    const javaPid = running?.dynamodbPid as number;
    // The stream pollers and the webhook dispatcher at work, as a developer's stack is.
    await sleep(2_000);
    const before = output().length;

    process.kill(-(child.pid as number), 'SIGINT');

    await eventually(() => !isRunning(running?.pid as number) && !isRunning(javaPid), 60_000, 'stopped');
    const stopping = output().slice(before);
    // Java used to get the SIGINT too, and die under the workers still reading its stream.
    expect(stopping).not.toMatch(/ECONNREFUSED|failed|cannot describe|"level":"ERROR"/);
    expect(stopping).toMatch(/Local stack stopped\./);
  });

  it('exits 1 naming the port when --dynamodb-port is another DynamoDB Local, and creates nothing in it', {
    timeout: 90_000,
  }, async () => {
    const other = await startDynamoDbLocal();
    try {
      const dynamodbPort = new URL(other.endpoint).port;
      const stateDir = await mkdtemp(join(tmpdir(), 'start-command-'));
      tempDirs.push(stateDir);
      const { DYNAMODB_LOCAL_PATH: _, ...env } = process.env;
      const child = spawn(process.execPath, ['infra/local/start.ts', '--dynamodb-port', dynamodbPort], {
        cwd: repoRoot,
        env: { ...env, PORT: '0', LOCAL_STATE_DIR: stateDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push(child);
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      const [code] = await once(child, 'exit');
      expect(code, output).toBe(1);
      expect(output).toContain(`Port ${dynamodbPort} is in use`);
      const client = localClient(other.endpoint);
      try {
        expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
      } finally {
        client.destroy();
      }
    } finally {
      await other.stop();
    }
  });

  it('says so and exits 1 when DynamoDB Local dies under it', { timeout: 90_000 }, async () => {
    const { child, port, stateDir, baseUrl, output } = await startCommand();
    const running = await readRunningStack(port, stateDir);
    const exited = once(child, 'exit');

    process.kill(running?.dynamodbPid as number, 'SIGKILL');

    const [code] = await exited;
    expect(code, output()).toBe(1);
    expect(output()).toMatch(/DynamoDB Local \(pid \d+\) exited unexpectedly/);
    expect(await answers(baseUrl)).toBe(false);
  });
});
