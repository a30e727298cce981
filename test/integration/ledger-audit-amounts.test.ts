import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { creditKey, entryKey, transferKey } from '#shared/wallet/dynamodb/keys.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { auditBoth } from '../support/audit.ts';
import { createHotLedger } from '../support/ledger.ts';

/*
 * The audit of amounts: a movement whose every item agrees with the others, balances and running
 * balances included, and whose amount is zero or negative moved money the wrong way (a negative
 * payment takes from its recipient). Only the use cases' checks refuse such amounts; the audit
 * names each such item too, so that a writer that skipped them is found.
 */

const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
afterAll(() => client.destroy());

describe('the ledger audit of amounts', () => {
  it('names every entry, transfer and credit of a consistent movement whose amount is not positive', async () => {
    const hot = await createHotLedger(2);
    const [payer, other] = hot.payers as [string, string];
    // Money in the shop first, so that the negative credit below leaves no balance negative.
    expect(await hot.post([await hot.pay(payer, 100)])).toBe(1);
    // Written by the real stores, past the use case, which does not check the sign itself.
    const direct = await hot.pay(payer, -3, { to: other });
    const throughClearing = await hot.pay(other, -5);
    expect(await hot.post([throughClearing])).toBe(1);
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 95n, pendingMinor: 0n });

    const shop = walletAccount(hot.shop);
    const named = [
      transferKey(direct),
      entryKey(walletAccount(payer), 3),
      entryKey(walletAccount(other), 2),
      transferKey(throughClearing),
      entryKey(walletAccount(other), 3),
      creditKey(throughClearing),
      entryKey(shop, 2),
    ];
    for (const [path, report] of await auditBoth(client, hot.tableName)) {
      const notPositive = report.breaks.filter((b) => b.invariant === 'amount-not-positive');
      expect(notPositive.map((b) => b.subject).sort(), path).toEqual([...named].sort());
      // Nothing else: every other invariant holds, which is why this one is needed.
      expect(
        report.breaks.filter((b) => b.invariant !== 'amount-not-positive'),
        path,
      ).toEqual([]);
      expect(notPositive[0]?.detail, path).toMatch(/amountMinor -?\d+ is not a positive safe integer/);
    }
  });
});
