import { describe, expect, it } from 'vitest';
import { createEndpointSlots } from '#shared/webhooks/dispatch/endpoint-slots.ts';

const settings = { perEndpoint: 2, slowAttemptMs: 1_000 };

describe('endpoint slots', () => {
  it('runs at most perEndpoint attempts at an endpoint, and gives a freed slot to the task that waited longest', async () => {
    const slots = createEndpointSlots({ ...settings, now: () => 0 });
    const first = await slots.acquire('a');
    await slots.acquire('a');
    const order: string[] = [];
    const waitFor = (name: string) =>
      slots.acquire('a').then((free) => {
        order.push(name);
        return free;
      });
    const third = waitFor('third');
    const fourth = waitFor('fourth');
    // Another endpoint is not held up by this one's.
    await slots.acquire('b');
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    first(); // given back once, however often it is called
    (await third)();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  it('is full at twice perEndpoint holds, and a hold given back wakes whoever waits for one', async () => {
    const slots = createEndpointSlots({ ...settings, now: () => 0 });
    const holds = [slots.hold('a'), slots.hold('a'), slots.hold('a')];
    expect(slots.full('a')).toBe(false);
    holds.push(slots.hold('a'));
    expect(slots.full('a')).toBe(true);
    expect(slots.full('b')).toBe(false);
    const woken = slots.released();
    holds[0]?.();
    await woken;
    expect(slots.full('a')).toBe(false);
  });

  it('calls an endpoint slow once one of its attempts has run slowAttemptMs', async () => {
    let now = 0;
    const slots = createEndpointSlots({ ...settings, now: () => now });
    const free = await slots.acquire('a');
    now = 999;
    expect(slots.slow('a')).toBe(false);
    now = 1_000;
    expect(slots.slow('a')).toBe(true);
    expect(slots.slow('b')).toBe(false);
    free();
    expect(slots.slow('a')).toBe(false);
  });
});
