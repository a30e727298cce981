import { afterAll, describe, expect, it } from 'vitest';
import { CREDIT_POSTER_STREAM } from '#infra/credit-poster-settings.ts';
import { TemporarilyUnavailableError } from '#shared/errors.ts';
import { createCreditStore } from '#shared/wallet/dynamodb/credit-store.ts';
import { walletKey } from '#shared/wallet/dynamodb/keys.ts';
import type { CreditInTransit } from '#shared/wallet/hot-wallet/credit-batch.ts';
import { makePostCredits, PostingCutShort } from '#shared/wallet/hot-wallet/post-credits.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { proxiedClient, startFaultProxy } from '../support/faults.ts';
import { createHotLedger } from '../support/ledger.ts';

/*
 * On AWS a hot wallet's credits reach every shard of the table's stream (their keys are random), so
 * as many pollers as shards post to the one wallet at once. DynamoDB Local's stream has one shard,
 * and the local stack one poller: this test plays the pollers, each in a container of its own,
 * each handed its shard's credits a poll at a time, through the proxy's DynamoDB-like conflicts.
 */

const proxy = await startFaultProxy({ conflicts: true });
const POLLERS = 12;
const CREDITS_EACH = 20;
const PER_POLL = 10;

/**
 * A payment, asked again when it answered busy (nothing written), as a client retries a 503: the
 * suite's other files load the one DynamoDB Local while these 240 payments are made.
 */
async function payRetried(pay: () => Promise<string>): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await pay();
    } catch (error) {
      if (!(error instanceof TemporarilyUnavailableError) || attempt === 5) throw error;
    }
  }
}

describe('credit pollers posting to one wallet at once', () => {
  const clients = Array.from({ length: POLLERS }, () => proxiedClient(proxy));
  afterAll(() => {
    for (const client of clients) client.destroy();
  });

  // 240 payments, then their postings: well past the default timeout when the suite loads DynamoDB Local.
  it('post each credit once, one poller at a time: the wallet item is touched at most 0.1 times per credit', {
    timeout: 120_000,
  }, async () => {
    const hot = await createHotLedger(POLLERS);
    const shards = await Promise.all(
      hot.payers.map(async (payer) => {
        const ids: string[] = [];
        for (let n = 0; n < CREDITS_EACH; n++) ids.push(await payRetried(() => hot.pay(payer, 1)));
        return (await hot.wallets.credits.read(hot.shop, ids)).credits;
      }),
    );
    proxy.resetTouches();
    // What each call answers is no check here: a call that ran out of time (on a loaded DynamoDB
    // Local) may have posted some credits before it handed its records back. The ledger is.
    await Promise.all(
      shards.map(async (credits: CreditInTransit[], i) => {
        const post = makePostCredits({
          ledger: createCreditStore({
            client: clients[i] as (typeof clients)[number],
            tableName: hot.tableName,
          }),
          clock: systemClock,
        });
        for (let start = 0; start < credits.length; start += PER_POLL) {
          const poll = credits.slice(start, start + PER_POLL);
          // A call out of time (or whose DynamoDB answered late past its tries) hands its records
          // back, and the stream delivers them again, up to the mapping's retries.
          for (let delivery = 0; ; delivery++) {
            try {
              await post(hot.shop, poll);
              break;
            } catch (error) {
              const handedBack =
                error instanceof TemporarilyUnavailableError || error instanceof PostingCutShort;
              if (!handedBack || delivery === CREDIT_POSTER_STREAM.maxRetryAttempts) throw error;
            }
          }
        }
      }),
    );

    const total = POLLERS * CREDITS_EACH;
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({
      balanceMinor: BigInt(total),
      pendingMinor: 0n,
    });
    const read = await Promise.all(
      shards.map(
        async (credits) =>
          (
            await hot.wallets.credits.read(
              hot.shop,
              credits.map((c) => c.transferId),
            )
          ).credits,
      ),
    );
    const seqs = read
      .flat()
      .map((credit) => credit.postedSeq as number)
      .sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const { writes, failed } = proxy.touches(hot.tableName, { pk: walletKey(hot.shop) });
    expect((writes + failed) / total, JSON.stringify({ writes, failed })).toBeLessThanOrEqual(0.1);
  });
});
