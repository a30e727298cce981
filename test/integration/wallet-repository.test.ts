import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createHotMarkerStore } from '#shared/wallet/dynamodb/hot-marker-store.ts';
import { inboundKey } from '#shared/wallet/dynamodb/keys.ts';
import type { AccountState } from '#shared/wallet/model/accounts.ts';
import type { TransferRecord } from '#shared/wallet/model/transfer.ts';
import type { TransferPlan } from '#shared/wallet/send/ports.ts';
import { uniqueSub } from '../support/events.ts';
import { mentions, notGivenUp, proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';
import { walletLedger } from '../support/wallet.ts';

/* The repositories alone on DynamoDB Local: the outcomes their transaction conditions tell apart. */
const wallets = walletLedger();
const proxy = await startFaultProxy();
const at = () => new Date().toISOString();

const transfer = (fromAddress: string, toAddress: string, amountMinor: number): TransferRecord => ({
  transferId: randomUUID(),
  fromAddress,
  toAddress,
  amountMinor,
  currency: 'USD',
  createdAt: at(),
});

/** A wallet opened by a deposit of `minor` (a deposit is positive: a wallet opens with a cent at least). */
async function funded(minor: number): Promise<string> {
  const address = uniqueSub('repo');
  const outcome = await wallets.recordDeposit({
    depositId: randomUUID(),
    address,
    amountMinor: minor,
    currency: 'USD',
    createdAt: at(),
  });
  expect(outcome.kind).toBe('recorded');
  return address;
}

/** A plan on what is stored now: direct, or through the clearing account. */
async function plan(
  record: TransferRecord,
  route: 'direct' | 'clearing',
  attempt = 1,
): Promise<TransferPlan> {
  const state = await wallets.transfers.read(record);
  return {
    transfer: route === 'clearing' ? { ...record, via: 'clearing' } : record,
    payer: state.payer,
    route: route === 'direct' ? { kind: 'direct', recipient: state.recipient } : { kind: 'clearing' },
    attempt,
  };
}

const balance = async (address: string) => (await wallets.readWallet(address))?.balanceMinor;

describe('transfer ledger on DynamoDB Local', () => {
  it('commits a direct transfer, moving the amount to the recipient at once', async () => {
    const [alice, bob] = [await funded(500), await funded(1)];
    expect(await wallets.transfers.commit(await plan(transfer(alice, bob, 200), 'direct'))).toEqual({
      kind: 'committed',
    });
    expect([await balance(alice), await balance(bob)]).toEqual([300n, 201n]);
  });

  it("claims a wallet's direct credit, answering the claim it replaced; a direct commit settles its claim on the wallet", async () => {
    const [alice, bob] = [await funded(500), await funded(1)];
    const record = transfer(alice, bob, 1);
    const now = Date.now();
    expect(await wallets.claims.claimDirectCredit(bob, record.transferId, now)).toEqual({});
    expect(await wallets.claims.claimDirectCredit(bob, 'next', now + 1)).toEqual({
      previous: { claimId: record.transferId, claimedAt: now },
    });
    expect((await wallets.transfers.read(record)).recipientDirectClaim).toBeUndefined();
    await wallets.transfers.commit(await plan(record, 'direct'));
    expect((await wallets.transfers.read(record)).recipientDirectClaim).toBe(record.transferId);
  });

  it('withdraws a claim that is still the last, restoring the one before it, and leaves a later one alone', async () => {
    const bob = await funded(1);
    const now = Date.now();
    await wallets.claims.claimDirectCredit(bob, 'first', now);
    const second = await wallets.claims.claimDirectCredit(bob, 'second', now + 1);
    await wallets.claims.releaseDirectCredit(bob, 'second', second ?? {});
    const third = await wallets.claims.claimDirectCredit(bob, 'third', now + 2);
    expect(third).toEqual({ previous: { claimId: 'first', claimedAt: now } });
    await wallets.claims.claimDirectCredit(bob, 'fourth', now + 3);
    await wallets.claims.releaseDirectCredit(bob, 'third', third ?? {});
    expect(await wallets.claims.claimDirectCredit(bob, 'fifth', now + 4)).toEqual({
      previous: { claimId: 'fourth', claimedAt: now + 3 },
    });
  });

  it('commits a payment through the clearing account: the payer is debited, the credit waits in transit', async () => {
    const [alice, shop] = [await funded(500), await funded(1)];
    const record = transfer(alice, shop, 200);
    expect(await wallets.transfers.commit(await plan(record, 'clearing'))).toEqual({ kind: 'committed' });
    expect([await balance(alice), await balance(shop)]).toEqual([300n, 1n]);
    expect(await wallets.transfers.creditPosted(record.transferId)).toBe(false);
  });

  it('tells a payer that moved on from a recipient that did, and writes nothing', async () => {
    const [alice, bob] = [await funded(500), await funded(1)];
    const stale = await plan(transfer(alice, bob, 1), 'direct');
    await wallets.transfers.commit(await plan(transfer(alice, bob, 1), 'direct'));
    const payerMoved = {
      ...stale,
      route: { kind: 'direct' as const, recipient: (await wallets.transfers.read(stale.transfer)).recipient },
    };
    expect(await wallets.transfers.commit(payerMoved)).toEqual({ kind: 'payer-moved', inFlight: false });
    const fresh = await plan(transfer(alice, bob, 1), 'direct');
    const staleRecipient: AccountState = { exists: true, balance: 0n, seq: 0 };
    expect(
      await wallets.transfers.commit({ ...fresh, route: { kind: 'direct', recipient: staleRecipient } }),
    ).toEqual({
      kind: 'recipient-busy',
      payerMoved: false,
    });
    expect([await balance(alice), await balance(bob)]).toEqual([499n, 2n]);
  });

  it('answers a claimed key with the transfer that claimed it', async () => {
    const [alice, bob] = [await funded(500), await funded(1)];
    const claim = { sub: alice, key: randomUUID(), expiresAt: Math.floor(Date.now() / 1000) + 86_400 };
    const first = transfer(alice, bob, 100);
    await wallets.transfers.commit({ ...(await plan(first, 'direct')), claim });
    const again = { ...(await plan(transfer(alice, bob, 100), 'direct')), claim };
    expect(await wallets.transfers.commit(again)).toEqual({ kind: 'key-claimed', transfer: first });
    expect(await balance(alice)).toBe(400n);
  });

  it('records a deposit once per id and answers a re-run with the first record', async () => {
    const address = uniqueSub('repo');
    const deposit = { depositId: randomUUID(), address, amountMinor: 70, currency: 'USD', createdAt: at() };
    expect(await wallets.recordDeposit(deposit)).toEqual({ kind: 'recorded' });
    expect(await wallets.recordDeposit({ ...deposit, createdAt: at() })).toEqual({
      kind: 'already-recorded',
      deposit,
    });
    expect(await balance(address)).toBe(70n);
  });
});

describe('credit ledger on DynamoDB Local', () => {
  async function inTransit(count: number) {
    const shop = await funded(1);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const payer = await funded(100);
      const record = transfer(payer, shop, 10 + i);
      expect(await wallets.transfers.commit(await plan(record, 'clearing'))).toEqual({ kind: 'committed' });
      ids.push(record.transferId);
    }
    return { shop, ids };
  }

  it('posts credits in one transaction, then finds them posted and posts nothing twice', async () => {
    const { shop, ids } = await inTransit(3);
    const read = await wallets.credits.read(shop, ids);
    expect(read.credits.map((c) => c.postedSeq)).toEqual([undefined, undefined, undefined]);
    expect(
      await wallets.credits.post({
        address: shop,
        wallet: read.wallet,
        credits: read.credits,
        postedAt: at(),
        postingId: randomUUID(),
      }),
    ).toEqual({
      kind: 'posted',
    });
    expect(await balance(shop)).toBe(1n + 10n + 11n + 12n);
    const after = await wallets.credits.read(shop, ids);
    expect(after.credits.map((c) => c.postedSeq)).toEqual([2, 3, 4]);
    expect(await wallets.transfers.creditPosted(ids[0] as string)).toBe(true);
    // The same batch again, as a redelivery would bring it, on the wallet as it is now.
    expect(
      await wallets.credits.post({
        address: shop,
        wallet: after.wallet,
        credits: read.credits,
        postedAt: at(),
        postingId: randomUUID(),
      }),
    ).toEqual({
      kind: 'credit-taken',
    });
    expect(await balance(shop)).toBe(34n);
  });

  it('tells a wallet that moved since it was read, and posts nothing', async () => {
    const { shop, ids } = await inTransit(1);
    const read = await wallets.credits.read(shop, ids);
    await wallets.recordDeposit({
      depositId: randomUUID(),
      address: shop,
      amountMinor: 5,
      currency: 'USD',
      createdAt: at(),
    });
    expect(
      await wallets.credits.post({
        address: shop,
        wallet: read.wallet,
        credits: read.credits,
        postedAt: at(),
        postingId: randomUUID(),
      }),
    ).toEqual({
      kind: 'wallet-moved',
    });
    expect(await balance(shop)).toBe(6n);
  });
});

describe('the hot-wallet marker on DynamoDB Local', () => {
  it('is written once per renewal however often a container asks, and a refusal tells another container until when it holds', async () => {
    // Through a proxy that keeps every request it forwards.
    const client = proxiedClient(proxy);
    const tableName = process.env.WALLETS_TABLE_NAME as string;
    const shop = uniqueSub('shop');
    const writes = () => proxy.requests('PutItem', mentions(inboundKey(shop))).filter(notGivenUp).length;
    const [poster, sender] = [
      createHotMarkerStore({ client, tableName }).markHot,
      createHotMarkerStore({ client, tableName }).markHot,
    ];
    const now = Date.now();
    // Each call answers until when the marker is known to hold.
    for (let delivery = 0; delivery < 3; delivery++) {
      expect(await poster(shop, now + 10_000 + delivery)).toBe(now + 10_000);
    }
    expect(writes()).toBe(1);
    // Another container: refused once, and told the marker's time by the refusal.
    expect(await sender(shop, now + 10_000)).toBe(now + 10_000);
    expect(await sender(shop, now + 10_500)).toBe(now + 10_000);
    expect(writes()).toBe(2);
    // Past the renewal margin the marker is written again.
    expect(await poster(shop, now + 16_000)).toBe(now + 16_000);
    expect(writes()).toBe(3);
    // A marker that could not be written is known to hold for no time at all.
    const down = uniqueSub('shop');
    proxy.inject({ kind: 'server-error' }, { operation: 'PutItem', when: mentions(down) });
    expect(await createHotMarkerStore({ client, tableName }).markHot(down, now + 10_000)).toBe(0);
    const stored = await storedItem(tableName, { pk: inboundKey(shop) });
    expect(stored?.hotUntil).toBe(now + 16_000);
  });
});
