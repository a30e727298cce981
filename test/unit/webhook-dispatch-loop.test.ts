import { describe, expect, it } from 'vitest';
import { runDispatcher } from '#shared/webhooks/dispatch/dispatch-loop.ts';
import type { Dispatcher } from '#shared/webhooks/dispatch/dispatcher.ts';

/** A dispatcher that finds nothing to start; `onPoll` runs inside each poll. */
function idleDispatcher(onPoll: () => void): Dispatcher & { polls: number } {
  const fake = {
    polls: 0,
    poll: async () => {
      fake.polls++;
      onPoll();
      return 0;
    },
    drain: async () => undefined,
    freed: () => new Promise<void>(() => undefined),
    inFlight: () => 0,
  };
  return fake;
}

describe('the dispatcher loop', () => {
  it('ends at once when stopped during a poll, not after its idle interval', async () => {
    const stop = new AbortController();
    const dispatcher = idleDispatcher(() => stop.abort());
    // An hour's idle interval: were the stop missed, the test would time out.
    await runDispatcher(dispatcher, { pollMs: 3_600_000, signal: stop.signal });
    expect(dispatcher.polls).toBe(1);
  });

  it('polls again as soon as a slot is given back, while attempts are in flight', async () => {
    const stop = new AbortController();
    let freeSlot: () => void = () => undefined;
    const fake = {
      polls: 0,
      poll: async () => {
        if (++fake.polls === 2) stop.abort();
        // The first poll's attempt gives its slot back a moment later.
        else setTimeout(() => freeSlot(), 10);
        return 0;
      },
      drain: async () => undefined,
      freed: () =>
        new Promise<void>((resolve) => {
          freeSlot = resolve;
        }),
      inFlight: () => 1,
    };
    await runDispatcher(fake, { pollMs: 3_600_000, signal: stop.signal });
    expect(fake.polls).toBe(2);
  });
});
