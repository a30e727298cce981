import { describe, expect, it } from 'vitest';
import { DEFAULT_DISPATCHER_SETTINGS, makeDispatcher } from '#shared/webhooks/dispatch/dispatcher.ts';
import type { DeliveryTask, TaskStore } from '#shared/webhooks/dispatch/ports.ts';
import type { AttemptResult } from '#shared/webhooks/model/delivery.ts';
import { enabledEndpoints } from '../support/webhook-endpoints.ts';
import { deliveryTask, memoryTasks } from '../support/webhook-tasks.ts';

/*
 * When a dispatcher reads a task's endpoint (issue 46, "≤ 1 s p99"): the endpoint as read serves a
 * second of deliveries, so the first delivery after a quiet second needs a read. Sent after the
 * claim had been answered, a burst's first deliveries waited for two of DynamoDB's round trips one
 * after the other; sent with the claim, for the longer of the two. In memory, with a claim that
 * stays unanswered until the test lets it.
 */

const task = (n: number) => deliveryTask(n, 'hooks');

describe('a dispatcher after a quiet second', () => {
  it('reads the endpoints of the tasks it claims while the claim is in flight, once per endpoint', async () => {
    const claim = Promise.withResolvers<readonly boolean[]>();
    const tasks: TaskStore = {
      due: async () => ({ works: [task(1), task(2)], more: false }),
      claimAll: () => claim.promise,
      finish: async () => undefined,
      reschedule: async () => undefined,
      expandReplay: async () => true,
    };
    const reads: string[] = [];
    const endpoints = enabledEndpoints((address, endpointId) => reads.push(`${address}/${endpointId}`));
    const delivered: string[] = [];
    const dispatcher = makeDispatcher({
      tasks,
      events: { event: async () => undefined },
      endpoints,
      deliver: async (_endpoint, message): Promise<AttemptResult> => {
        delivered.push(message.id);
        return { outcome: 'delivered', statusCode: 204, durationMs: 1 };
      },
      clock: { now: () => 0 },
      settings: DEFAULT_DISPATCHER_SETTINGS,
    });

    const polled = dispatcher.poll();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The claim is not answered yet: the endpoint is read already, and nothing is delivered.
    expect(reads).toEqual(['shop/hooks']);
    expect(delivered).toEqual([]);

    claim.resolve([true, true]);
    expect(await polled).toBe(2);
    await dispatcher.drain();
    expect(delivered.sort()).toEqual(['evt_1', 'evt_2']);
    expect(reads).toEqual(['shop/hooks']);
  });
});

/**
 * A dispatcher whose tasks' endpoint its owner changes between polls (`endpoint`), on a clock the
 * test moves: what was sent where, and how each task ended.
 */
function ownerChanging(works: readonly DeliveryTask[]) {
  const ended: string[] = [];
  const sent: string[] = [];
  const { store } = memoryTasks(works);
  const endpoint = { status: 'enabled' as 'enabled' | 'disabled', url: 'http://127.0.0.1:9/hooks' };
  const healthy = enabledEndpoints();
  const clock = { at: 0, now: () => clock.at };
  const dispatcher = makeDispatcher({
    tasks: {
      ...store,
      finish: async (task, _lease, end) => {
        ended.push(`${task.eventId} ${end}`);
      },
    },
    events: { event: async () => undefined },
    endpoints: {
      ...healthy,
      endpointOf: async (address, endpointId) => {
        const read = await healthy.endpointOf(address, endpointId);
        return read && { ...read, ...endpoint };
      },
    },
    deliver: async (to, message): Promise<AttemptResult> => {
      sent.push(`${message.id} ${to.url}`);
      return { outcome: 'delivered', statusCode: 204, durationMs: 1 };
    },
    clock,
    settings: DEFAULT_DISPATCHER_SETTINGS,
  });
  /** One poll at `at` ms, and every attempt it started. */
  const pollAt = async (at: number) => {
    clock.at = at;
    const started = await dispatcher.poll();
    await dispatcher.drain();
    return started;
  };
  return { endpoint, pollAt, ended, sent };
}

describe('an endpoint its owner changes, within the second a read of it serves', () => {
  it('takes the events that follow its enabling again at once', async () => {
    // Task 1 is of an event before the endpoint was disabled; task 2, due at 10 ms, of one derived
    // after its owner had enabled it again.
    const { endpoint, pollAt, ended, sent } = ownerChanging([
      deliveryTask(1, 'hooks'),
      { ...deliveryTask(2, 'hooks'), dueAt: 10 },
    ]);
    endpoint.status = 'disabled';
    expect(await pollAt(0)).toBe(1);
    expect(ended).toEqual(['evt_1 endpoint-disabled']);

    endpoint.status = 'enabled';
    expect(await pollAt(10)).toBe(1);
    // As first built, the disabled endpoint as read for task 1 served task 2 too: it ended as
    // `endpoint-disabled`, and so did a replay asked just after enabling it (a CI run's failure of
    // test/e2e/webhook-events-api.test.ts).
    expect(sent).toEqual(['evt_2 http://127.0.0.1:9/hooks']);
    expect(ended).toEqual(['evt_1 endpoint-disabled', 'evt_2 delivered']);
  });

  it.each(['replay', 'redeliver'] as const)(
    'sends a %s its owner asked after moving it to the URL it has now',
    async (trigger) => {
      // Task 2, due at 10 ms, is evt_1 again, asked for once the owner had moved the endpoint.
      const { endpoint, pollAt, sent } = ownerChanging([
        deliveryTask(1, 'hooks'),
        { ...deliveryTask(1, 'hooks'), key: 'TASK#again', trigger, dueAt: 10 },
      ]);
      expect(await pollAt(0)).toBe(1);
      endpoint.url = 'http://127.0.0.1:9/moved';
      expect(await pollAt(10)).toBe(1);
      // As first built, the endpoint as read for task 1 sent it to the URL its owner had left.
      expect(sent).toEqual(['evt_1 http://127.0.0.1:9/hooks', 'evt_1 http://127.0.0.1:9/moved']);
    },
  );
});
