import { describe, expect, it } from 'vitest';
import { LookalikeAddressError } from '#shared/errors.ts';
import { makeGetBalance } from '#shared/wallet/balance/get-balance.ts';
import { InMemoryWallets } from './fakes/in-memory-wallets.ts';

const clock = { now: () => Date.parse('2026-11-24T10:00:00.000Z') };

describe('get balance (use case)', () => {
  it('reads the balance of the caller, exact', async () => {
    const wallets = new InMemoryWallets();
    wallets.wallets.set('alice', { balanceMinor: 9_007_199_254_740_993n, seq: 1, updatedAt: 'then' });
    expect(await makeGetBalance({ wallets, clock })('alice')).toEqual({
      address: 'alice',
      balanceMinor: 9_007_199_254_740_993n,
      pendingMinor: 0n,
      updatedAt: 'then',
    });
  });

  it("opens a new caller's wallet, which then reads 0", async () => {
    const wallets = new InMemoryWallets();
    const getBalance = makeGetBalance({ wallets, clock });
    expect(await getBalance('newcomer')).toEqual({
      address: 'newcomer',
      balanceMinor: 0n,
      pendingMinor: 0n,
      updatedAt: undefined,
    });
    expect(wallets.wallets.has('newcomer')).toBe(true);
  });

  it("opens no wallet at an address that looks like another wallet's, and says so", async () => {
    const wallets = new InMemoryWallets();
    wallets.lookalikes.add('\u0440\u0430\u0441\u04357');
    const getBalance = makeGetBalance({ wallets, clock });
    await expect(getBalance('\u0440\u0430\u0441\u04357')).rejects.toBeInstanceOf(LookalikeAddressError);
    expect(wallets.wallets.has('\u0440\u0430\u0441\u04357')).toBe(false);
  });
});
