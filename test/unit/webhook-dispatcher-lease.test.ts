import { describe, expect, it } from 'vitest';
import { DEFAULT_DISPATCHER_SETTINGS, makeDispatcher } from '#shared/webhooks/dispatch/dispatcher.ts';
import type { AttemptResult } from '#shared/webhooks/model/delivery.ts';
import { enabledEndpoints } from '../support/webhook-endpoints.ts';
import { memoryTasks, tasksOf } from '../support/webhook-tasks.ts';

/*
 * A claimed task's lease (30 s) must hold its wait for a slot, its attempt (up to the 15 s timeout)
 * and the attempt's records: past it, another dispatcher may take the task again and send it at
 * once, and the writes of the first are refused; and the deployed invocation, which stops
 * claiming one lease before its end, would time out mid-attempt. In memory, with the deployed
 * settings, on a clock the test moves.
 */

const settings = DEFAULT_DISPATCHER_SETTINGS;
const settle = () => new Promise((resolve) => setTimeout(resolve, 1));

/** Two tasks of an endpoint never heard from (one attempt, one wait); the first attempt runs `firstMs`. */
async function secondTaskAfter(firstMs: number) {
  let now = 0;
  const { store, rescheduled } = memoryTasks(tasksOf('hooks', 2));
  const attempts: { readonly at: number; readonly answer: (result: AttemptResult) => void }[] = [];
  const dispatcher = makeDispatcher({
    tasks: store,
    events: { event: async () => undefined },
    endpoints: enabledEndpoints(),
    deliver: () => new Promise<AttemptResult>((answer) => attempts.push({ at: now, answer })),
    clock: { now: () => now },
    settings,
  });
  expect(await dispatcher.poll()).toBe(2);
  await settle();
  expect(attempts).toHaveLength(1);
  now = firstMs;
  attempts[0]?.answer({ outcome: 'retry', errorClass: 'timeout', durationMs: firstMs });
  await settle();
  return { attempts, rescheduled, dispatcher };
}

describe("a claimed task's lease", () => {
  it('holds no attempt that could end with its records past the lease: a task that waited a third of it is left for the lease to lapse', async () => {
    // The first attempt timed out (15 s): the second, attempted then, would end at 30 s, the lease's end.
    const { attempts, rescheduled } = await secondTaskAfter(15_000);
    expect(attempts).toHaveLength(1);
    // Nothing written for it: claimed, it is due again when the lease lapses, with the same webhook-id.
    expect(rescheduled.has('TASK#1')).toBe(false);
  });

  it('attempts a task that waited less: its attempt and records end within the lease', async () => {
    const { attempts } = await secondTaskAfter(9_000);
    // Started 9 s into its 30 s lease: 15 s of attempt at most, and 6 s for its records.
    expect(attempts.map((attempt) => attempt.at)).toEqual([0, 9_000]);
  });
});
