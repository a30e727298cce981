import { describe, expect, it } from 'vitest';
import { createEndpointSlots } from '#shared/webhooks/dispatch/endpoint-slots.ts';

const settings = { perEndpoint: 2, queuedPerEndpoint: 3, slowAttemptMs: 1_000 };

/** A slot that must have been given. */
async function slotOf(wait: Promise<(() => void) | undefined>): Promise<() => void> {
  const free = await wait;
  if (!free) throw new Error('the wait was shed');
  return free;
}

describe('endpoint slots', () => {
  it('runs at most perEndpoint attempts at an endpoint, and gives a freed slot to the task that waited longest', async () => {
    const slots = createEndpointSlots({ ...settings, now: () => 0 });
    const first = await slotOf(slots.acquire('a'));
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
    (await slotOf(third))();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  it('is full at perEndpoint + queuedPerEndpoint holds, and a hold given back wakes whoever waits for one', async () => {
    const slots = createEndpointSlots({ ...settings, now: () => 0 });
    const holds = [slots.hold('a'), slots.hold('a'), slots.hold('a'), slots.hold('a')];
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
    const free = await slotOf(slots.acquire('a'));
    now = 999;
    expect(slots.slow('a')).toBe(false);
    now = 1_000;
    expect(slots.slow('a')).toBe(true);
    expect(slots.slow('b')).toBe(false);
    free();
    expect(slots.slow('a')).toBe(false);
  });

  it('once slow, is full at twice perEndpoint holds and sheds the newest waits past perEndpoint', async () => {
    let now = 0;
    const slots = createEndpointSlots({ ...settings, now: () => now });
    for (let n = 0; n < 4; n++) slots.hold('a');
    const running = [await slotOf(slots.acquire('a')), await slotOf(slots.acquire('a'))];
    const waits = [slots.acquire('a'), slots.acquire('a'), slots.acquire('a')];
    // While it answers within slowAttemptMs, nothing is shed and there is room for a fifth hold.
    expect(slots.shed()).toBe(0);
    expect(slots.full('a')).toBe(false);
    now = 1_000;
    expect(slots.full('a')).toBe(true);
    expect(slots.shed()).toBe(1);
    expect(await waits[2]).toBeUndefined();
    // The two oldest still wait, and get the slots as they are given back.
    running[0]?.();
    running[1]?.();
    expect(typeof (await waits[0])).toBe('function');
    expect(typeof (await waits[1])).toBe('function');
  });

  it('knows no pace until it has held tasks for a second, then counts the holds given back over the last second', () => {
    let clock = 0;
    const slots = createEndpointSlots({ ...settings, now: () => clock });
    const holds = [slots.hold('a'), slots.hold('a'), slots.hold('a'), slots.hold('a')];
    clock = 100;
    (holds[0] as () => void)();
    clock = 250;
    (holds[1] as () => void)();
    expect(slots.pace('a')).toBeUndefined();
    clock = 1_000;
    expect(slots.pace('a')).toBe(2);
    // The one at 100 ms is out of the last second.
    clock = 1_200;
    (holds[2] as () => void)();
    expect(slots.pace('a')).toBe(2);
    // Idle, then busy again: a new start, its pace unknown again.
    (holds[3] as () => void)();
    slots.hold('a');
    expect(slots.pace('a')).toBeUndefined();
  });
});
