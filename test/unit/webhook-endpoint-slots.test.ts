import { describe, expect, it } from 'vitest';
import { createEndpointSlots } from '#shared/webhooks/dispatch/endpoint-slots.ts';

const settings = { perEndpoint: 2, queuedPerEndpoint: 3, slowAttemptMs: 1_000, slowInFlight: 100 };

/** A slot that must have been given. */
type Free = (attempted?: boolean) => void;

async function slotOf(wait: Promise<Free | undefined>): Promise<Free> {
  const free = await wait;
  if (!free) throw new Error('the wait was shed');
  return free;
}

/** Runs one attempt at the endpoint that takes `ms` on the clock `clock` moves. */
async function attemptOf(
  slots: ReturnType<typeof createEndpointSlots>,
  endpointId: string,
  clock: { now: number },
  ms: number,
) {
  const free = await slotOf(slots.acquire(endpointId));
  clock.now += ms;
  free();
}

describe('endpoint slots', () => {
  it('runs at most perEndpoint attempts at an endpoint, and gives a freed slot to the task that waited longest', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({ ...settings, now: () => clock.now });
    await attemptOf(slots, 'a', clock, 0);
    await attemptOf(slots, 'b', clock, 0);
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

  it('runs one attempt and holds one wait at an endpoint never heard from, and opens its other slots to the waits when that attempt ends', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({ ...settings, now: () => clock.now });
    slots.hold('a');
    expect(slots.full('a')).toBe(false);
    slots.hold('a');
    // It might hang: one attempt, one wait.
    expect(slots.full('a')).toBe(true);
    const first = await slotOf(slots.acquire('a'));
    const waits = [slots.acquire('a'), slots.acquire('a')];
    clock.now = 10;
    first();
    // Answered: both waits start, in its 2 slots.
    expect((await Promise.all(waits)).every((free) => free !== undefined)).toBe(true);
  });

  it('is full at perEndpoint + queuedPerEndpoint holds while it answers fast; a hold given back wakes whoever waits for one', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({ ...settings, now: () => clock.now });
    await attemptOf(slots, 'a', clock, 10);
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

  it('lets an endpoint that answers slowly hold the waits its slots start within slowAttemptMs', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({
      ...settings,
      perEndpoint: 4,
      queuedPerEndpoint: 28,
      now: () => clock.now,
    });
    const holdsUntilFull = (endpointId: string) => {
      let held = 0;
      for (; !slots.full(endpointId); held++) slots.hold(endpointId);
      return held;
    };
    // Answering in 900 ms, 4 slots start 5 attempts within a second: 4 running and 5 waiting.
    await attemptOf(slots, 'slowish', clock, 900);
    expect(holdsUntilFull('slowish')).toBe(9);
    // Answering in 10 ms, as many as its queue.
    await attemptOf(slots, 'fast', clock, 10);
    expect(holdsUntilFull('fast')).toBe(32);
  });

  it('calls an endpoint slow from when one of its attempts has run slowAttemptMs until one ends sooner', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({ ...settings, now: () => clock.now });
    const free = await slotOf(slots.acquire('a'));
    clock.now = 999;
    expect(slots.slow('a')).toBe(false);
    clock.now = 1_000;
    expect(slots.slow('a')).toBe(true);
    expect(slots.slow('b')).toBe(false);
    // Ended (a timeout, say): still slow, so its next tasks are not taken as a fast endpoint's.
    free();
    expect(slots.slow('a')).toBe(true);
    await attemptOf(slots, 'a', clock, 1_000);
    expect(slots.slow('a')).toBe(true);
    await attemptOf(slots, 'a', clock, 999);
    expect(slots.slow('a')).toBe(false);
  });

  it('forgets nothing of what the attempts took for a slot given back unused', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({ ...settings, now: () => clock.now });
    await attemptOf(slots, 'a', clock, 1_000);
    // A task that waited too long for its slot gives it back at once, having sent nothing: the
    // endpoint is no faster for it.
    (await slotOf(slots.acquire('a')))(false);
    expect(slots.slow('a')).toBe(true);
  });

  it('once slow, is full at twice perEndpoint holds and sheds the newest waits past perEndpoint', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({ ...settings, now: () => clock.now });
    await attemptOf(slots, 'a', clock, 0);
    for (let n = 0; n < 4; n++) slots.hold('a');
    const running = [await slotOf(slots.acquire('a')), await slotOf(slots.acquire('a'))];
    const waits = [slots.acquire('a'), slots.acquire('a'), slots.acquire('a')];
    // While it answers within slowAttemptMs, nothing is shed and there is room for a fifth hold.
    expect(slots.shed()).toBe(0);
    expect(slots.full('a')).toBe(false);
    clock.now = 1_000;
    expect(slots.full('a')).toBe(true);
    expect(slots.shed()).toBe(1);
    expect(await waits[2]).toBeUndefined();
    // The two oldest still wait, and get the slots as they are given back.
    running[0]?.();
    running[1]?.();
    expect(typeof (await waits[0])).toBe('function');
    expect(typeof (await waits[1])).toBe('function');
  });

  it('lets the slow endpoints together hold slowInFlight at most, and sheds the newest waits of the longest queues past it', async () => {
    const clock = { now: 0 };
    const slots = createEndpointSlots({ ...settings, slowInFlight: 7, now: () => clock.now });
    // Two endpoints hanging with 2 attempts and 2 waits each, one with 2 attempts and 1 wait: 11.
    const waits = new Map<string, Promise<Free | undefined>[]>();
    for (const endpointId of ['a', 'b', 'c']) await attemptOf(slots, endpointId, clock, 0);
    for (const [endpointId, count] of [
      ['a', 4],
      ['b', 4],
      ['c', 3],
    ] as const) {
      for (let n = 0; n < count; n++) slots.hold(endpointId);
      waits.set(
        endpointId,
        Array.from({ length: count }, () => slots.acquire(endpointId)),
      );
    }
    // Answering, they hold what they may.
    expect(slots.shed()).toBe(0);
    clock.now = 1_000;
    // Slow, 11 of 7: the newest waits of the longest queues go, 4 of the 5 waits.
    expect(slots.shed()).toBe(4);
    const stateOf = (wait: Promise<Free | undefined>) =>
      Promise.race([
        wait.then((free) => (free ? 'slot' : 'shed')),
        new Promise((resolve) => setTimeout(() => resolve('waiting'), 10)),
      ]);
    const states = (endpointId: string) => Promise.all((waits.get(endpointId) ?? []).map(stateOf));
    expect([await states('a'), await states('b'), await states('c')]).toEqual([
      ['slot', 'slot', 'shed', 'shed'],
      ['slot', 'slot', 'shed', 'shed'],
      ['slot', 'slot', 'waiting'],
    ]);
    // Counted from the attempts and waits: the shed waits' holds, not yet given back, shed no more.
    expect(slots.shed()).toBe(0);
    // Their share taken, no slow endpoint may take a hold, however few it holds; an answering one may.
    await attemptOf(slots, 'd', clock, 1_000);
    expect(slots.slow('d')).toBe(true);
    expect(slots.full('d')).toBe(true);
    await attemptOf(slots, 'd', clock, 10);
    expect(slots.full('d')).toBe(false);
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
