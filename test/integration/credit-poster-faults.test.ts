import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostCreditsHandler } from '#functions/post-credits/handler.ts';
import { defaultRetryPolicy } from '#shared/dynamodb/retry.ts';
import { createCreditStore } from '#shared/wallet/dynamodb/credit-store.ts';
import { creditKey } from '#shared/wallet/dynamodb/keys.ts';
import type { CreditInTransit } from '#shared/wallet/hot-wallet/credit-batch.ts';
import { makePostCredits } from '#shared/wallet/hot-wallet/post-credits.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { mentions, proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';
import { createHotLedger } from '../support/ledger.ts';
import { linesWrittenBy, metricLines } from '../support/logs.ts';

/*
 * The credit poster's use case and repository against DynamoDB Local through the fault proxy: the
 * faults DynamoDB has, where the SDK meets them.
 */

const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
afterAll(() => client.destroy());

// Some tests pay in up to 60 credits first, one transaction each on the DynamoDB Local the whole
// suite shares: seconds alone, several times that beside the rest of the suite on two cores.
describe('the credit poster when DynamoDB misbehaves', { timeout: 90_000 }, () => {
  it('waits out a throttled posting within its deadline and posts the credit once, rather than hand it back to the stream', async () => {
    const hot = await createHotLedger(1);
    const [payer] = hot.payers as [string];
    const transferId = await hot.pay(payer, 250);
    const post = makePostCredits({
      ledger: createCreditStore({ client, tableName: hot.tableName }),
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

  it("counts a batch's credits when its completion's answers are lost and the next try finds it done", async () => {
    const hot = await createHotLedger(2);
    const transferIds: string[] = [];
    for (let n = 0; n < 60; n++) transferIds.push(await hot.pay(hot.payers[n % 2] as string, 1));
    const credits: CreditInTransit[] = [];
    for (const part of [transferIds.slice(0, 30), transferIds.slice(30)]) {
      credits.push(...(await hot.wallets.credits.read(hot.shop, part)).credits);
    }
    const post = makePostCredits({
      ledger: createCreditStore({ client, tableName: hot.tableName }),
      clock: systemClock,
    });
    // Each of the two completions commits, and every answer of its first call is lost (3 tries
    // with one token): the call gives up, and the next try, a new transaction, is refused.
    proxy.inject(
      { kind: 'lose-response' },
      {
        operation: 'TransactWriteItems',
        when: mentions('completedAt'),
        times: 2 * defaultRetryPolicy.attempts,
      },
    );

    expect(await post(hot.shop, credits)).toEqual({ posted: 60 });
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 60n, pendingMinor: 0n });
  });

  it('counts the credits of a one-transaction posting whose answers are lost and whose next try finds them posted', async () => {
    const hot = await createHotLedger(2);
    const transferIds: string[] = [];
    for (let n = 0; n < 3; n++) transferIds.push(await hot.pay(hot.payers[n % 2] as string, 1));
    const { credits } = await hot.wallets.credits.read(hot.shop, transferIds);
    const post = makePostCredits({
      ledger: createCreditStore({ client, tableName: hot.tableName }),
      clock: systemClock,
    });
    // The posting commits, and every answer of its first call is lost (3 tries with one token):
    // the call gives up, and the next try reads the credits posted, by this posting.
    proxy.inject(
      { kind: 'lose-response' },
      {
        operation: 'TransactWriteItems',
        when: (r) => mentions(hot.shop)(r) && mentions('postedSeq')(r),
        times: defaultRetryPolicy.attempts,
      },
    );

    expect(await post(hot.shop, credits)).toEqual({ posted: 3 });
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 3n, pendingMinor: 0n });
    // Delivered again, by the stream: posted by another call, so not counted twice.
    expect(await post(hot.shop, credits)).toEqual({ posted: 0 });
  });

  it('counts the credits a call posted before DynamoDB refused to complete its next batch, and hands the batch back from its first record', async () => {
    const hot = await createHotLedger(1);
    const [payer] = hot.payers as [string];
    const transferIds: string[] = [];
    for (let n = 0; n < 50; n++) transferIds.push(await hot.pay(payer, 1));
    const images = await Promise.all(
      transferIds.map((transferId) => storedItem(hot.tableName, { pk: creditKey(transferId) })),
    );
    const event: DynamoDBStreamEvent = {
      Records: images.map((image, i) => ({
        eventID: `e${i}`,
        eventName: 'INSERT' as const,
        dynamodb: { SequenceNumber: String(1000 + i), NewImage: marshall(image) as never },
      })),
    };
    // The credit paid last goes in the second batch, whose completion DynamoDB refuses outright (every try).
    const last = images
      .map((image) => image as { createdAt: string; transferId: string })
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.transferId.localeCompare(b.transferId))
      .at(-1)?.transferId as string;
    proxy.inject(
      { kind: 'rewrite', rewrite: (body) => ({ ...body, TransactItems: [] }) },
      {
        operation: 'TransactWriteItems',
        when: (request) => mentions(creditKey(last))(request) && mentions('completedAt')(request),
      },
    );
    const handler = createPostCreditsHandler({ client, tableName: hot.tableName });
    let answer: unknown;
    const lines = await linesWrittenBy(async () => {
      answer = await handler(event);
    });

    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '1000' }] });
    expect(metricLines(lines).find((line) => 'CreditsPosted' in line)).toMatchObject({ CreditsPosted: 49 });
    // Both batches were posted: the money is the wallet's, only the last credit's entry is missing.
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 50n, pendingMinor: 0n });
    const [unposted] = (await hot.wallets.credits.read(hot.shop, [last])).credits;
    expect(unposted?.postedSeq).toBeUndefined();
  });
});
