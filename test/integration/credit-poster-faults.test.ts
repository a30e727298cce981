import { afterAll, describe, expect, it } from 'vitest';
import { createCreditLedger } from '#shared/wallet/credit-ledger.ts';
import { systemClock } from '#shared/wallet/ports.ts';
import { makePostCredits } from '#shared/wallet/post-credits.ts';
import { mentions, proxiedClient, startFaultProxy } from '../support/faults.ts';
import { createHotLedger } from '../support/ledger.ts';

/*
 * The credit poster's use case and repository against DynamoDB Local through the fault proxy: the
 * faults DynamoDB has, where the SDK meets them.
 */

const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
afterAll(() => client.destroy());

describe('the credit poster when DynamoDB misbehaves', () => {
  it('waits out a throttled posting within its deadline and posts the credit once, rather than hand it back to the stream', async () => {
    const hot = await createHotLedger(1);
    const [payer] = hot.payers as [string];
    const transferId = await hot.pay(payer, 250);
    const post = makePostCredits({
      ledger: createCreditLedger({ client, tableName: hot.tableName }),
      clock: systemClock,
    });
    // More throttled transactions than one call's tries: the episode outlasts a call.
    proxy.inject(
      { kind: 'transaction-throttled' },
      { operation: 'TransactWriteItems', when: mentions(hot.shop), times: 5 },
    );
    const { credits } = await hot.wallets.credits.read(hot.shop, [transferId]);

    expect(await post(hot.shop, credits)).toEqual({ posted: 1 });
    expect(proxy.requests('TransactWriteItems', mentions(hot.shop)).length).toBeGreaterThan(5);
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 250n, pendingMinor: 0n });
    const [posted] = (await hot.wallets.credits.read(hot.shop, [transferId])).credits;
    expect(posted?.postedSeq).toBe(1);
  });
});
