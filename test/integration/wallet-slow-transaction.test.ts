import { describe, expect, it } from 'vitest';
import { createSendMoneyHandler } from '#functions/send-money/handler.ts';
import { createDocumentClient, REQUEST_TIMEOUT_MS } from '#shared/dynamodb/client.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { invoke, sendEvent, uniqueSub } from '../support/events.ts';
import { mentions, startFaultProxy, storedItem } from '../support/faults.ts';
import { fund } from '../support/wallet.ts';

/*
 * A payment whose transaction DynamoDB is slow to run, past the SDK's request timeout: the retry
 * with the same ClientRequestToken is answered TransactionInProgressException while the first is
 * in flight. Under `npm test`'s load DynamoDB Local queued transactions that long, and three quick
 * tries answered in progress gave the client a 503 of our own making (test/e2e/hot-wallet.test.ts).
 * Through the proxy in conflict mode, which answers as DynamoDB does to a token in flight.
 */

const proxy = await startFaultProxy({ conflicts: true });
const send = createSendMoneyHandler({
  client: createDocumentClient({ endpoint: proxy.endpoint }),
  tableName: process.env.WALLETS_TABLE_NAME as string,
  settings: loadWalletSettings(),
});

async function balanceMinor(address: string): Promise<number> {
  const item = await storedItem(process.env.WALLETS_TABLE_NAME, { pk: `WALLET#${address}` });
  return (item?.balance as number | undefined) ?? 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a payment whose transaction DynamoDB is slow to run', () => {
  it('waits for its transaction in flight past the request timeout, and answers it once, not 503', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await Promise.all([fund(alice, 1_000), fund(bob, 1)]);
    // Its first try stays in flight for a second and a half past the request timeout.
    proxy.inject(
      { kind: 'hold-in-flight', until: sleep(REQUEST_TIMEOUT_MS + 1_500) },
      { operation: 'TransactWriteItems', when: mentions(alice), times: 1 },
    );
    const response = await invoke(send, sendEvent(alice, { toAddress: bob, amount: 1 }));
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({ fromAddress: alice, toAddress: bob, amount: 1 });
    expect(await balanceMinor(alice)).toBe(900);
    expect(await balanceMinor(bob)).toBe(101);
    // Asked again every 250 ms meanwhile: no failed touch of the payer's item. The hot-wallet
    // budgets count touches, and waiting for one's own transaction contends with nothing.
    expect(proxy.touches(process.env.WALLETS_TABLE_NAME as string, { pk: `WALLET#${alice}` })).toMatchObject({
      failed: 0,
    });
  });
});
