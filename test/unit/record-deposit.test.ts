import { describe, expect, it } from 'vitest';
import type { DepositPlan, DepositRecord, DepositStore } from '#shared/wallet/deposit/ports.ts';
import { makeRecordDeposit } from '#shared/wallet/deposit/record-deposit.ts';

/** A deposit store in memory that records what the use case asked of it. */
function storeOf() {
  const calls: string[] = [];
  const commits: DepositPlan[] = [];
  const empty = { exists: false, balance: 0n, seq: 0 };
  const deposits: DepositStore = {
    async read() {
      calls.push('read');
      return { wallet: empty, issuance: empty };
    },
    async commit(plan) {
      calls.push('commit');
      commits.push(plan);
      return { kind: 'committed' };
    },
  };
  return { deposits, calls, commits };
}

const deposit = (amountMinor: number): DepositRecord => ({
  depositId: `dep-${amountMinor}`,
  address: 'alice',
  amountMinor,
  currency: 'USD',
  createdAt: '2026-12-05T10:00:00.000Z',
});

describe('record deposit (use case)', () => {
  it('refuses a zero or negative amount, which would debit the wallet, reading and writing nothing', async () => {
    const { deposits, calls } = storeOf();
    const recordDeposit = makeRecordDeposit({ deposits, ids: { next: () => 'try-1' } });
    for (const amountMinor of [0, -0, -1, -500]) {
      expect(await recordDeposit(deposit(amountMinor))).toEqual({ kind: 'not-positive' });
    }
    expect(calls).toEqual([]);
  });

  it('records a positive amount in one read and one commit', async () => {
    const { deposits, calls, commits } = storeOf();
    const recordDeposit = makeRecordDeposit({ deposits, ids: { next: () => 'try-1' } });
    expect(await recordDeposit(deposit(1))).toEqual({ kind: 'recorded' });
    expect(calls).toEqual(['read', 'commit']);
    expect(commits[0]?.deposit.amountMinor).toBe(1);
  });
});
