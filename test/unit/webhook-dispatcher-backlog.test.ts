import { describe, expect, it } from 'vitest';
import { DEFAULT_DISPATCHER_SETTINGS, makeDispatcher } from '#shared/webhooks/dispatch/dispatcher.ts';
import type { DeliveryTask } from '#shared/webhooks/dispatch/ports.ts';
import type { AttemptResult } from '#shared/webhooks/model/delivery.ts';
import { enabledEndpoints } from '../support/webhook-endpoints.ts';
import { memoryTasks, tasksOf } from '../support/webhook-tasks.ts';

/*
 * What a dispatcher does with the backlog of an endpoint that answers, slower than its tasks come
 * due (issue 46, "one dead endpoint slows no other"): while everything due fits in a poll's page,
 * the backlog is left due (no write: a hold is free in a moment); once more is due than a page
 * holds, the backlog would hide every other endpoint's tasks behind it, so it is moved on to the
 * endpoint's pace, and the other endpoint's task is taken. In memory, on a clock the test moves.
 */

const settings = {
  ...DEFAULT_DISPATCHER_SETTINGS,
  perEndpoint: 2,
  queuedPerEndpoint: 4,
  pollBatch: 10,
  leaseMs: 30_000,
};
const TICK = 100;

/**
 * A dispatcher over `tasks` whose attempts answer only when the test says, 2 every tick (20 a
 * second); runs `seconds` of polls, one a tick. Answers the claims and when each task was claimed.
 */
async function run(tasks: readonly DeliveryTask[], seconds: number) {
  let now = 0;
  const { store, claimCalls } = memoryTasks(tasks);
  const waiting: (() => void)[] = [];
  const dispatcher = makeDispatcher({
    tasks: store,
    events: { event: async () => undefined },
    endpoints: enabledEndpoints(),
    deliver: () =>
      new Promise<AttemptResult>((resolve) =>
        waiting.push(() => resolve({ outcome: 'delivered', durationMs: TICK })),
      ),
    clock: { now: () => now },
    settings,
  });
  const claimedAt = new Map<string, number>();
  const claims = new Map<string, number>();
  for (; now <= seconds * 1_000; now += TICK) {
    for (const answer of waiting.splice(0, 2)) answer();
    await new Promise((resolve) => setTimeout(resolve, 1));
    const before = claimCalls.length;
    await dispatcher.poll();
    await new Promise((resolve) => setTimeout(resolve, 1));
    for (const call of claimCalls.slice(before)) {
      call.keys.forEach((key, at) => {
        // A claim for the attempt holds the task a lease on; a deferral moves it less far.
        if ((call.until[at] as number) < now + settings.leaseMs) return;
        claimedAt.set(key, now);
        claims.set(key, (claims.get(key) ?? 0) + 1);
      });
    }
  }
  return { claimCalls, claimedAt, claims };
}

describe('a dispatcher beside an endpoint with a backlog, answering', () => {
  it('leaves its tasks due while no more is due than a poll reads: nothing written but the claims', async () => {
    const { claimCalls, claimedAt } = await run(tasksOf('busy', 10), 2);
    expect(claimedAt.size).toBe(10);
    for (const call of claimCalls)
      for (const until of call.until) expect(until).toBeGreaterThanOrEqual(30_000);
  });

  it('moves its backlog on to its pace once more is due than a poll reads, and takes the other endpoint’s task', async () => {
    const backlog = tasksOf('busy', 60);
    const other = tasksOf('other', 1, 60);
    const { claimCalls, claimedAt, claims } = await run([...backlog, ...other], 6);

    // Taken within a few polls of the pace being known (a second of answers), while the backlog
    // is still moved on a page a poll: not once the backlog is under a page, after its first 50
    // (2.2 s at 20 a second).
    const otherAt = claimedAt.get('TASK#60') as number;
    expect(otherAt).toBeLessThanOrEqual(1_500);
    expect(
      backlog.filter((task) => (claimedAt.get(task.key) ?? Number.POSITIVE_INFINITY) < otherAt).length,
    ).toBeLessThan(40);

    // Moved on one after another, at the pace it took them over the last second: 20 a second, 19
    // in its first (one attempt at a time until the first ended), so 50 to 53 ms apart.
    const deferral = claimCalls.find((call) => call.until.some((until) => until < 30_000));
    const until = deferral?.until ?? [];
    expect(until.length).toBeGreaterThan(1);
    const steps = new Set(until.slice(1).map((at, n) => at - (until[n] as number)));
    expect(steps.size).toBe(1);
    expect([...steps][0]).toBeGreaterThanOrEqual(50);
    expect([...steps][0]).toBeLessThanOrEqual(53);
    // Moved, not dropped: every task of the backlog is taken in the end, each once.
    expect(backlog.map((task) => claims.get(task.key))).toEqual(backlog.map(() => 1));
  });
});
