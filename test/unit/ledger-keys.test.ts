import { describe, expect, it } from 'vitest';
import {
  accountOfEntryItem,
  entryItem,
  entryKey,
  HISTORY_SHARDS,
  historyShardKey,
} from '#shared/wallet/dynamodb/keys.ts';
import { CLEARING_ACCOUNT, walletAccount } from '#shared/wallet/model/accounts.ts';
import type { EntryRecord } from '#shared/wallet/model/entry.ts';

const entryOf = (address: string, seq: number): EntryRecord => ({
  account: walletAccount(address),
  seq,
  transferId: `t${seq}`,
  transferKind: 'transfer',
  direction: 'in',
  amountMinor: 100,
  balanceAfter: 100 * seq,
  counterpartyAccount: CLEARING_ACCOUNT,
  counterpartyAddress: 'payer',
  currency: 'USD',
  createdAt: '2026-11-27T10:00:00.000Z',
});

describe('the items of entries', () => {
  it("keeps a posted credit's entry out of the history index's one key of its wallet, and its account recoverable", () => {
    // An address may hold the separator itself.
    for (const address of ['shop', 'shop#3', 'a#b#12']) {
      const shards = new Set<unknown>();
      for (let seq = 1; seq <= HISTORY_SHARDS; seq++) {
        const item = entryItem(entryOf(address, seq), true);
        expect(item).not.toHaveProperty('account');
        expect(item.pk).toBe(entryKey(walletAccount(address), seq));
        expect(accountOfEntryItem(item)).toBe(walletAccount(address));
        shards.add(item.historyShard);
      }
      // Consecutive entries, every shard of the wallet's own.
      expect(shards).toEqual(
        new Set(Array.from({ length: HISTORY_SHARDS }, (_, n) => historyShardKey(walletAccount(address), n))),
      );
    }
  });

  it('keeps every other entry under its account in the history index', () => {
    const item = entryItem(entryOf('shop', 7), false);
    expect(item.account).toBe(walletAccount('shop'));
    expect(item).not.toHaveProperty('historyShard');
    expect(accountOfEntryItem(item)).toBe(walletAccount('shop'));
  });
});
