import { describe, expect, it } from 'vitest';
import { CallerShare, callerEndpoint, callerOf } from '#infra/local/dynamodb-share.ts';

/** Asks for a slot for each caller in `order`; `served` records whose request got one, in order. */
function queue(share: CallerShare, order: readonly string[]) {
  const served: string[] = [];
  const releases: Array<() => void> = [];
  for (const [i, caller] of order.entries()) {
    void share.acquire(caller).then((release) => {
      served.push(`${caller}${i}`);
      releases.push(release);
    });
  }
  return { served, releases };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('sharing DynamoDB Local among its callers', () => {
  it('lets no more requests through at once than it has slots', async () => {
    const { served } = queue(new CallerShare(2), ['a', 'a', 'a', 'b']);
    await settle();
    expect(served).toEqual(['a0', 'a1']);
  });

  it('serves the callers waiting one after another, so one caller with many requests waiting delays another by one', async () => {
    const share = new CallerShare(1);
    const { served, releases } = queue(share, ['a', 'a', 'a', 'a', 'poster', 'a', 'b']);
    for (let step = 0; step < 6; step++) {
      await settle();
      releases.shift()?.();
    }
    await settle();
    // a0 had the slot; then a, poster and b take turns, each caller's own in order.
    expect(served).toEqual(['a0', 'a1', 'poster4', 'b6', 'a2', 'a3', 'a5']);
  });

  it('frees a slot once however often its release is called', async () => {
    const share = new CallerShare(1);
    const release = await share.acquire('a');
    const { served } = queue(share, ['b', 'c']);
    release();
    release();
    await settle();
    expect(served).toEqual(['b0']);
  });

  it('reads the caller from the path its endpoint gives, and no caller from any other path', () => {
    const endpoint = callerEndpoint('http://127.0.0.1:8000', 'send money/1');
    expect(callerOf(new URL(`${endpoint}/`).pathname)).toBe('send money/1');
    expect(callerOf('/')).toBe('');
    expect(callerOf('/proxy/touches')).toBe('');
  });
});
