import { describe, expect, it } from 'vitest';
import {
  CallerShare,
  callerEndpoint,
  callerOf,
  isRead,
  READS_MAY_PASS,
} from '#infra/local/dynamodb-share.ts';

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

/**
 * Holds the one slot of `share`, then asks for one for each request in `order` (`<caller>:read` or
 * `<caller>:write`), and releases the slot step by step; answers the requests in the order served.
 */
async function serveAll(share: CallerShare, order: readonly string[]): Promise<string[]> {
  const served: string[] = [];
  let release = await share.acquire('holder');
  const waits = order.map((request, i) => {
    const [caller, kind] = request.split(':') as [string, string];
    return share.acquire(caller, kind === 'read').then((next) => {
      served.push(`${request}${i}`);
      release = next;
    });
  });
  await settle();
  for (let step = 0; step < order.length; step++) {
    release();
    await settle();
  }
  await Promise.all(waits);
  return served;
}

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

  it("serves a caller's reads before its own writes waiting, each kind in the order it came, and every other caller's turn where it was", async () => {
    const served = await serveAll(new CallerShare(1), [
      'dispatcher:write',
      'dispatcher:write',
      'poster:write',
      'dispatcher:read',
      'dispatcher:read',
    ]);
    expect(served).toEqual([
      'dispatcher:read3',
      'poster:write2',
      'dispatcher:read4',
      'dispatcher:write0',
      'dispatcher:write1',
    ]);
  });

  it(`lets at most ${READS_MAY_PASS} of a caller's reads pass its write, so that reads that keep coming never hold a write back for good`, async () => {
    const reads = Array.from({ length: READS_MAY_PASS + 2 }, () => 'poller:read');
    const served = await serveAll(new CallerShare(1), ['poller:write', ...reads]);
    expect(served.indexOf('poller:write0')).toBe(READS_MAY_PASS);
    expect(served.filter((request) => request.startsWith('poller:read'))).toEqual(
      reads.map((request, i) => `${request}${i + 1}`),
    );
  });

  it('counts as reads the operations that only read, and anything else as a write', () => {
    const reads = ['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems'];
    const writes = [
      'PutItem',
      'UpdateItem',
      'DeleteItem',
      'BatchWriteItem',
      'TransactWriteItems',
      'ExecuteStatement',
    ];
    expect(reads.filter(isRead)).toEqual(reads);
    expect([...writes, undefined].filter(isRead)).toEqual([]);
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
