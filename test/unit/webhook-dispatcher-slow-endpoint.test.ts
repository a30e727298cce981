import { describe, expect, it } from 'vitest';
import { DEFAULT_DISPATCHER_SETTINGS, makeDispatcher } from '#shared/webhooks/dispatch/dispatcher.ts';
import type { TaskStore } from '#shared/webhooks/dispatch/ports.ts';
import type { AttemptResult } from '#shared/webhooks/model/delivery.ts';
import { enabledEndpoints } from '../support/webhook-endpoints.ts';
import { memoryTasks, tasksOf } from '../support/webhook-tasks.ts';

/*
 * What a dispatcher does with an endpoint that stops answering while a backlog of its tasks is due
 * (issue 46, "one dead endpoint slows no other"): while it answered, a poll claimed slots and a
 * queue's worth of its tasks at once; once its attempts run past slowAttemptMs, the waits past its
 * slow allowance are shed and its due tasks are moved deferMs on, all in one request, never
 * attempted meanwhile. In memory: the store's conditions are the claims' own.
 */

const settings = {
  ...DEFAULT_DISPATCHER_SETTINGS,
  perEndpoint: 2,
  queuedPerEndpoint: 4,
  slowAttemptMs: 1_000,
  deferMs: 5_000,
};

/**
 * A dispatcher whose first attempt answers at once and every later one hangs, at the clock
 * `now()`; counts the attempts.
 */
function hangingDispatcher(store: TaskStore, now: () => number) {
  const counted = { attempts: 0 };
  const dispatcher = makeDispatcher({
    tasks: store,
    events: { event: async () => undefined },
    endpoints: enabledEndpoints(),
    deliver: () => {
      counted.attempts++;
      if (counted.attempts === 1)
        return Promise.resolve<AttemptResult>({ outcome: 'delivered', durationMs: 0 });
      return new Promise<AttemptResult>(() => undefined);
    },
    clock: { now },
    settings,
  });
  return { dispatcher, counted };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

/**
 * Two polls at 0: the first claims 2 (an endpoint not heard from has one attempt and one wait);
 * the first attempt answers at once, so the second claims up to its 2 slots and its queue, 5 more.
 */
async function claimWhileItAnswers(dispatcher: ReturnType<typeof hangingDispatcher>['dispatcher']) {
  expect(await dispatcher.poll()).toBe(2);
  await settle();
  expect(await dispatcher.poll()).toBe(5);
  await settle();
}

describe('a dispatcher beside an endpoint that stops answering', () => {
  it('sheds the waits past its slow allowance and moves its due tasks deferMs on in one request', async () => {
    let now = 0;
    const { store, claimCalls, rescheduled } = memoryTasks(tasksOf('dead', 11));
    const { dispatcher, counted } = hangingDispatcher(store, () => now);

    // It answered so far: its slots and its queue, 6 tasks, are claimed, a request a poll.
    await claimWhileItAnswers(dispatcher);
    expect(claimCalls).toEqual([
      { keys: [0, 1].map((n) => `TASK#${n}`), until: Array(2).fill(30_000) },
      { keys: [2, 3, 4, 5, 6].map((n) => `TASK#${n}`), until: Array(5).fill(30_000) },
    ]);
    expect(counted.attempts).toBe(3);

    // Its attempts have run a second: slow.
    now = 1_000;
    expect(await dispatcher.poll()).toBe(0);
    await settle();
    // The two newest waits past its allowance of 2 are shed and moved deferMs on, not attempted...
    expect(Object.fromEntries(rescheduled)).toEqual({ 'TASK#5': 6_000, 'TASK#6': 6_000 });
    // ...and its 4 tasks never taken are moved deferMs on too, all in one request.
    expect(claimCalls.slice(2)).toEqual([
      { keys: [7, 8, 9, 10].map((n) => `TASK#${n}`), until: Array(4).fill(6_000) },
    ]);
    expect(counted.attempts).toBe(3);
  });

  it('spreads a backlog: as many each deferMs as the endpoint may hold once slow, the last written once until its turn', async () => {
    let now = 0;
    const { store, claimCalls } = memoryTasks(tasksOf('dead', 31));
    const { dispatcher } = hangingDispatcher(store, () => now);
    await claimWhileItAnswers(dispatcher);
    now = 1_000;
    await dispatcher.poll();
    await settle();
    // 7 claimed at first (one answered, then 2 slots and 4 queued), 2 of them shed; the 24 never
    // taken are deferred in one request, 4 (2 × perEndpoint) to each deferMs step, oldest first.
    const [deferral] = claimCalls.slice(2);
    expect(deferral?.keys).toEqual(Array.from({ length: 24 }, (_, n) => `TASK#${n + 7}`));
    expect(deferral?.until).toEqual(
      [6_000, 11_000, 16_000, 21_000, 26_000, 31_000].flatMap((at) => [at, at, at, at]),
    );

    // A poll each second for the next 29 s, the endpoint still hanging: the last of the backlog,
    // due again at 31 s, is not written meanwhile (all deferred deferMs on, it was every 5 s).
    for (now = 2_000; now <= 30_000; now += 1_000) {
      await dispatcher.poll();
      await settle();
    }
    const writesOfLast = claimCalls.filter((call) => call.keys.includes('TASK#30')).length;
    expect(writesOfLast).toBe(1);
  });
});
