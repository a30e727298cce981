import { describe, expect, it } from 'vitest';
import { DEFAULT_DISPATCHER_SETTINGS, makeDispatcher } from '#shared/webhooks/dispatch/dispatcher.ts';
import type { TaskStore } from '#shared/webhooks/dispatch/ports.ts';
import type { AttemptResult } from '#shared/webhooks/model/delivery.ts';
import type { DeliveryEndpointStore } from '#shared/webhooks/model/ports.ts';
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

describe('an endpoint its owner enables again', () => {
  it('takes a replay asked within the second after a task found it disabled', async () => {
    // Task 1 is a delivery of before the endpoint was disabled; task 2, a replay's, due at 10 ms:
    // written after its owner had enabled the endpoint again and asked for the replay.
    const ended: string[] = [];
    const { store } = memoryTasks([
      deliveryTask(1, 'hooks'),
      { ...deliveryTask(2, 'hooks'), trigger: 'replay', dueAt: 10 },
    ]);
    const tasks: TaskStore = {
      ...store,
      finish: async (task, _lease, end) => {
        ended.push(`${task.eventId} ${end}`);
      },
    };
    let status: 'enabled' | 'disabled' = 'disabled';
    const healthy = enabledEndpoints();
    const endpoints: DeliveryEndpointStore = {
      ...healthy,
      endpointOf: async (address, endpointId) => {
        const endpoint = await healthy.endpointOf(address, endpointId);
        return endpoint && { ...endpoint, status };
      },
    };
    let now = 0;
    const delivered: string[] = [];
    const dispatcher = makeDispatcher({
      tasks,
      events: { event: async () => undefined },
      endpoints,
      deliver: async (_endpoint, message): Promise<AttemptResult> => {
        delivered.push(message.id);
        return { outcome: 'delivered', statusCode: 204, durationMs: 1 };
      },
      clock: { now: () => now },
      settings: DEFAULT_DISPATCHER_SETTINGS,
    });

    expect(await dispatcher.poll()).toBe(1);
    await dispatcher.drain();
    expect(ended).toEqual(['evt_1 endpoint-disabled']);

    status = 'enabled';
    now = 10;
    expect(await dispatcher.poll()).toBe(1);
    await dispatcher.drain();
    // As first built, the disabled endpoint as read for task 1 served task 2 too (a read serves a
    // second): the replay ended as `endpoint-disabled` and sent nothing.
    expect(delivered).toEqual(['evt_2']);
    expect(ended).toEqual(['evt_1 endpoint-disabled', 'evt_2 delivered']);
  });
});
