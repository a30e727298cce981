import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chooseRunningStack,
  describeChoice,
  listRunningStacks,
  type RunningStack,
  stackRecordPath,
} from '#infra/local/stack-record.ts';

/**
 * How the local commands (`npm run token`, `invoke`, `wallet:fund`, `wallet:audit`) find the stack
 * `npm start` runs, from the records in the state directory; test/e2e/start-command.test.ts checks
 * that a stack takes its record with it when it stops.
 */

const tempDirs: string[] = [];

afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'stack-record-'));
  tempDirs.push(dir);
  return dir;
}

/** The pid of a process that has exited and been reaped: what a stack killed outright leaves in its record. */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  if (pid === undefined) throw new Error('no child process');
  return pid;
}

async function record(dir: string, port: number, pid: number): Promise<RunningStack> {
  const stack: RunningStack = {
    baseUrl: `http://127.0.0.1:${port}`,
    pid,
    dynamodbEndpoint: 'http://127.0.0.1:1',
    dynamodbLocalEndpoint: 'http://127.0.0.1:1',
    conflicts: true,
    env: {},
  };
  await writeFile(stackRecordPath(dir, port), JSON.stringify(stack));
  return stack;
}

describe('finding the running local stack', () => {
  it('uses the only stack running when no port is given, and says it was the only one', async () => {
    const dir = await stateDir();
    const stack = await record(dir, 3861, process.pid);

    const choice = await chooseRunningStack({ stateDir: dir });

    expect(choice).toMatchObject({ stack, port: 3861 });
    if (!choice.stack) throw new Error(choice.problem);
    expect(describeChoice(choice)).toBe(
      'the local stack at http://127.0.0.1:3861 (the only one running; PORT picks another)',
    );
  });

  it('ignores and removes a record whose process is gone', async () => {
    const dir = await stateDir();
    const live = await record(dir, 3861, process.pid);
    await record(dir, 3000, deadPid());

    expect(await listRunningStacks(dir)).toEqual([live]);
    expect(existsSync(stackRecordPath(dir, 3000))).toBe(false);
    expect(existsSync(stackRecordPath(dir, 3861))).toBe(true);
  });

  it('names every running stack and asks for PORT instead of guessing when several run', async () => {
    const dir = await stateDir();
    await record(dir, 4100, process.pid);
    await record(dir, 3861, process.pid);

    const choice = await chooseRunningStack({ stateDir: dir });

    expect(choice.stack).toBeUndefined();
    if (choice.stack) return;
    expect(choice.running.map((s) => s.baseUrl)).toEqual(['http://127.0.0.1:3861', 'http://127.0.0.1:4100']);
    expect(choice.problem).toBe(
      '2 local stacks are running, at http://127.0.0.1:3861, http://127.0.0.1:4100: say which with PORT, e.g. `PORT=3861 npm run …`.',
    );
  });

  it('uses the stack on the given port, and only that one', async () => {
    const dir = await stateDir();
    await record(dir, 4100, process.pid);
    const chosen = await record(dir, 3861, process.pid);

    expect(await chooseRunningStack({ stateDir: dir, port: 3861 })).toMatchObject({
      stack: chosen,
      reason: 'PORT=3861',
    });
    const missing = await chooseRunningStack({ stateDir: dir, port: 3000 });
    expect(missing).toMatchObject({ stack: undefined, port: 3000, running: [] });
  });

  it('says plainly that none runs when there is no live record', async () => {
    const dir = await stateDir();
    await record(dir, 3000, deadPid());

    expect(await chooseRunningStack({ stateDir: dir })).toEqual({
      stack: undefined,
      port: undefined,
      problem: 'No local stack is running: start one with `npm start`.',
      running: [],
    });
  });
});
