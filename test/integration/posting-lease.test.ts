import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createCreditStore } from '#shared/wallet/dynamodb/credit-store.ts';
import { postingLeaseKey } from '#shared/wallet/dynamodb/keys.ts';
import { mentions, notGivenUp, proxiedClient, startFaultProxy } from '../support/faults.ts';

/*
 * A wallet's posting lease as DynamoDB holds it (shared/wallet/dynamodb/credit-store.ts), through the proxy
 * that counts the requests: what the poster's use case relies on, in the unit tests' in-memory
 * ledger, checked against the real item.
 */

const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
afterAll(() => client.destroy());

const ledger = createCreditStore({ client, tableName: inject('env').WALLETS_TABLE_NAME as string });
const holder = () => ({ poster: randomUUID(), call: randomUUID() });

describe('the posting lease', () => {
  it("keeps a waiting poller's signal when its holder renews it, so the holder does not let go without them", async () => {
    const shop = `shop-${randomUUID()}`;
    const [h, w] = [holder(), holder()];
    const now = Date.now();
    expect((await ledger.takeLease(shop, h, now, now + 5_000)).taken).toBe(true);
    expect(await ledger.takeLease(shop, w, now, now + 5_000)).toMatchObject({
      taken: false,
      othersWait: false,
    });
    expect(await ledger.waitFor(shop, now)).toBe(true);
    await ledger.renewLease(shop, h, now + 7_500);
    expect(await ledger.releaseLease(shop, h, false)).toBe('others-waiting');
    // Said once, heard once: the next release frees it.
    expect(await ledger.releaseLease(shop, h, false)).toBe('released');
    expect((await ledger.takeLease(shop, w, now, now + 5_000)).taken).toBe(true);
  });

  it("is one call's: another call of the same poster is refused while it holds, and told nobody else posted", async () => {
    const shop = `shop-${randomUUID()}`;
    const poster = randomUUID();
    const now = Date.now();
    expect((await ledger.takeLease(shop, { poster, call: 'a' }, now, now + 5_000)).taken).toBe(true);
    expect((await ledger.takeLease(shop, { poster, call: 'b' }, now, now + 5_000)).taken).toBe(false);
    await ledger.releaseLease(shop, { poster, call: 'a' }, false);
    expect(await ledger.takeLease(shop, { poster, call: 'b' }, now, now + 5_000)).toMatchObject({
      taken: true,
      othersPosted: false,
    });
  });

  it('lets go of a lease another poller has taken since it lapsed in one write when forced, leaving it theirs', async () => {
    const shop = `shop-${randomUUID()}`;
    const [h, w] = [holder(), holder()];
    const now = Date.now();
    await ledger.takeLease(shop, h, now, now + 5_000);
    expect((await ledger.takeLease(shop, w, now + 6_000, now + 11_000)).taken).toBe(true);
    const writes = () =>
      proxy.requests('UpdateItem', mentions(postingLeaseKey(shop))).filter(notGivenUp).length;
    const writesBefore = writes();
    expect(await ledger.releaseLease(shop, h, true)).toBe('released');
    expect(writes() - writesBefore).toBe(1);
    expect((await ledger.takeLease(shop, h, now + 7_000, now + 12_000)).taken).toBe(false);
  });
});
