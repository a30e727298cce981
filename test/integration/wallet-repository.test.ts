import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_BALANCE_MINOR } from '#shared/wallet/money.ts';
import type { TransferRecord } from '#shared/wallet/wallet-repository.ts';
import { uniqueSub } from '../support/events.ts';
import { walletLedger } from '../support/wallet.ts';

/* The repository alone on DynamoDB Local: the outcomes its transaction conditions tell apart. */
const wallets = walletLedger();
const at = () => new Date().toISOString();

const transfer = (fromAddress: string, toAddress: string, amountMinor: number): TransferRecord => ({
  transferId: randomUUID(),
  fromAddress,
  toAddress,
  amountMinor,
  currency: 'USD',
  createdAt: at(),
});

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

describe('wallet repository on DynamoDB Local', () => {
  it('commits a covered transfer to an open wallet, moving the amount', async () => {
    const [alice, bob] = [await funded(500), await funded(0)];
    expect(await wallets.commitTransfer(transfer(alice, bob, 200))).toEqual({ kind: 'committed' });
    expect((await wallets.readWallet(alice))?.balanceMinor).toBe(300n);
    expect((await wallets.readWallet(bob))?.balanceMinor).toBe(200n);
  });

  it('tells a sender with too little from one with no wallet, and changes nothing', async () => {
    const bob = await funded(0);
    const poor = await funded(10);
    expect(await wallets.commitTransfer(transfer(poor, bob, 11))).toEqual({
      kind: 'insufficient-funds',
      senderHasWallet: true,
    });
    expect(await wallets.commitTransfer(transfer(uniqueSub('none'), bob, 1))).toEqual({
      kind: 'insufficient-funds',
      senderHasWallet: false,
    });
    expect((await wallets.readWallet(poor))?.balanceMinor).toBe(10n);
  });

  it('tells an unknown recipient from one at the cap', async () => {
    const alice = await funded(100);
    const rich = await funded(MAX_BALANCE_MINOR);
    expect(await wallets.commitTransfer(transfer(alice, uniqueSub('none'), 1))).toEqual({
      kind: 'unknown-recipient',
    });
    expect(await wallets.commitTransfer(transfer(alice, rich, 1))).toEqual({ kind: 'recipient-limit' });
  });

  it('answers a claimed key with the transfer that claimed it', async () => {
    const [alice, bob] = [await funded(500), await funded(0)];
    const claim = { sub: alice, key: randomUUID(), expiresAt: Math.floor(Date.now() / 1000) + 86_400 };
    const first = transfer(alice, bob, 100);
    await wallets.commitTransfer(first, claim);
    expect(await wallets.commitTransfer(transfer(alice, bob, 100), claim)).toEqual({
      kind: 'key-used',
      transfer: first,
    });
    expect((await wallets.readWallet(alice))?.balanceMinor).toBe(400n);
  });

  it('records a deposit once per id and answers a re-run with the first record', async () => {
    const address = uniqueSub('repo');
    const deposit = { depositId: randomUUID(), address, amountMinor: 70, currency: 'USD', createdAt: at() };
    expect(await wallets.recordDeposit(deposit)).toEqual({ kind: 'recorded' });
    expect(await wallets.recordDeposit({ ...deposit, createdAt: at() })).toEqual({
      kind: 'already-recorded',
      deposit,
    });
    expect((await wallets.readWallet(address))?.balanceMinor).toBe(70n);
  });
});
