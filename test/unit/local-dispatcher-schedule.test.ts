import { describe, expect, it } from 'vitest';
import { startDispatcherSchedule } from '#infra/local/webhook-workers.ts';

/*
 * The webhook dispatcher's schedule under `npm start`. Each invocation waits at its end for its
 * attempts in flight, and an endpoint that never answers holds one for 15 s: invoked one after
 * another, every other endpoint's deliveries waited as long at each invocation's end.
 */

/** An invocation that runs until released, as one waiting on a hanging endpoint does. */
function invocations() {
  const releases: (() => void)[] = [];
  let onStart: (() => void) | undefined;
  const invoke = () =>
    new Promise<void>((resolve) => {
      releases.push(resolve);
      onStart?.();
    });
  const started = (count: number) =>
    new Promise<void>((resolve) => {
      onStart = () => releases.length >= count && resolve();
      onStart();
    });
  return { invoke, releases, started };
}

describe('the local webhook dispatcher schedule', () => {
  it('starts the next invocation on time while the one before still waits for its attempts', async () => {
    const { invoke, releases, started } = invocations();
    const schedule = startDispatcherSchedule(invoke, { everyMs: 20, log: () => {} });
    // Fails by timing out when an invocation waits for the one before it to end.
    await started(3);
    for (const release of releases) release();
    await schedule.stop();
  });

  it('stops only once every invocation still running has ended, and starts none after', async () => {
    const { invoke, releases, started } = invocations();
    const schedule = startDispatcherSchedule(invoke, { everyMs: 20, log: () => {} });
    await started(2);
    let stopped = false;
    const stopping = schedule.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(stopped).toBe(false);
    const count = releases.length;
    for (const release of releases) release();
    await stopping;
    expect(releases).toHaveLength(count);
  });

  it('logs a failed invocation and goes on with the next', async () => {
    const lines: string[] = [];
    let calls = 0;
    let second: () => void = () => {};
    const secondStarted = new Promise<void>((resolve) => {
      second = resolve;
    });
    const schedule = startDispatcherSchedule(
      async () => {
        calls++;
        if (calls === 1) throw new Error('DynamoDB unreachable');
        second();
      },
      { everyMs: 20, log: (line) => lines.push(line) },
    );
    await secondStarted;
    await schedule.stop();
    expect(lines[0]).toBe('webhook dispatcher: DynamoDB unreachable');
  });
});
