import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createSweepBatchesHandler } from '#functions/sweep-batches/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { createHistoryStore } from '#shared/wallet/dynamodb/history-store.ts';
import { makeListTransfers } from '#shared/wallet/history/transfer-history.ts';
import type { CreditInTransit } from '#shared/wallet/hot-wallet/credit-batch.ts';
import { makePostCredits, PostingCutShort } from '#shared/wallet/hot-wallet/post-credits.ts';
import { SWEEP_AFTER_MS } from '#shared/wallet/hot-wallet/sweep-batches.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { entryItemsByKey } from '../support/credits.ts';
import { createHotLedger, type HotLedger } from '../support/ledger.ts';

/*
 * A hot wallet's credits posted on two levels (batches, postings of whole batches, completions),
 * against DynamoDB Local: each step's conditions, and what readers see between the steps.
 */

const client = createDocumentClient({ endpoint: inject('env').DYNAMODB_ENDPOINT });
afterAll(() => client.destroy());

/** Pays the shop `amounts`, one payer each in turn, and answers the credits as the stream announces them. */
async function payShop(hot: HotLedger, amounts: number[]): Promise<CreditInTransit[]> {
  const ids: string[] = [];
  for (const [i, amount] of amounts.entries()) {
    ids.push(await hot.pay(hot.payers[i % hot.payers.length] as string, amount));
  }
  const credits: CreditInTransit[] = [];
  // A read holds 100 keys at most.
  for (let start = 0; start < ids.length; start += 99) {
    credits.push(...(await hot.wallets.credits.read(hot.shop, ids.slice(start, start + 99))).credits);
  }
  return credits;
}

/** The shop's entries by seq: each transfer's, and the running balances. */
async function entriesOfShop(hot: HotLedger) {
  const byKey = await entryItemsByKey(client, hot.tableName, hot.shop);
  return [...byKey.values()]
    .flat()
    .map((item) => item as { seq: number; transferId: string; balanceAfter: number; postedAt: string })
    .sort((a, b) => a.seq - b.seq);
}

describe('credits to a hot wallet posted on two levels', () => {
  it('never posts on its own a credit a batch holds, though the stream announced it unbatched', async () => {
    const hot = await createHotLedger(2);
    const post = makePostCredits({ ledger: hot.wallets.credits, clock: systemClock });
    // A first posting: the poster now knows the wallet and posts the next credits without a read.
    expect(await post(hot.shop, await payShop(hot, [100]))).toEqual({ posted: 1 });
    const announced = await payShop(hot, [20, 3]);
    // Another call claimed them for a batch, and stopped there.
    const batch = { batchId: randomUUID(), address: hot.shop, credits: announced };
    expect(await hot.wallets.credits.batch(batch, new Date().toISOString())).toBe('batched');

    expect(await post(hot.shop, announced)).toEqual({ posted: 2 });
    // Delivered again: nothing more.
    expect(await post(hot.shop, announced)).toEqual({ posted: 0 });
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 123n, pendingMinor: 0n });
    const entries = await entriesOfShop(hot);
    expect(entries.map((e) => [e.seq, e.balanceAfter])).toEqual([
      [1, 100],
      [2, 120],
      [3, 123],
    ]);
    expect(entries.map((e) => e.transferId).slice(1)).toEqual(announced.map((c) => c.transferId));
    const [stored] = await hot.wallets.credits.readBatches([batch.batchId]);
    expect(stored?.posting?.firstSeq).toBe(2);
    expect(stored?.completedAt).toBeDefined();
  });

  it('completes a posted batch whose poster died before its entries were written, and posts it once', async () => {
    const hot = await createHotLedger(2);
    const announced = await payShop(hot, [5, 6, 7]);
    const batch = { batchId: randomUUID(), address: hot.shop, credits: announced };
    await hot.wallets.credits.batch(batch, new Date().toISOString());
    const { wallet } = await hot.wallets.credits.read(hot.shop, []);
    const posted = await hot.wallets.credits.postBatches({
      address: hot.shop,
      wallet,
      batches: [batch],
      postedAt: new Date().toISOString(),
    });
    expect(posted.kind).toBe('posted');
    // Between the posting and its completion: the money is the wallet's, counted once.
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 18n, pendingMinor: 0n });
    expect(await entriesOfShop(hot)).toEqual([]);

    const post = makePostCredits({ ledger: hot.wallets.credits, clock: systemClock });
    expect(await post(hot.shop, announced)).toEqual({ posted: 3 });
    expect((await entriesOfShop(hot)).map((e) => [e.seq, e.balanceAfter])).toEqual([
      [1, 5],
      [2, 11],
      [3, 18],
    ]);
    const { credits } = await hot.wallets.credits.read(
      hot.shop,
      announced.map((c) => c.transferId),
    );
    expect(credits.map((c) => c.postedSeq)).toEqual([1, 2, 3]);
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 18n, pendingMinor: 0n });
  });

  it('answers a payment completed once its batch is posted, before its entries are written: the money is spendable', async () => {
    const hot = await createHotLedger(1);
    const history = createHistoryStore({ client, tableName: hot.tableName });
    const list = makeListTransfers({ history });
    const payer = hot.payers[0] as string;
    const idempotencyKey = randomUUID();
    const transferId = await hot.pay(payer, 9, { idempotencyKey });
    const [credit] = (await hot.wallets.credits.read(hot.shop, [transferId])).credits;
    if (!credit) throw new Error('no credit');
    const status = async () => ({
      lookup: (await history.movement(credit.transferId))?.status,
      payer: (await list({ sub: payer, limit: 10 })).items[0]?.status,
      // The same request again: its key's answer, with the status the transfer has now.
      replay: (await hot.send(payer, 9, { idempotencyKey })).status,
    });
    expect(await status()).toEqual({ lookup: 'pending', payer: 'pending', replay: 'pending' });
    const batch = { batchId: randomUUID(), address: hot.shop, credits: [credit] };
    await hot.wallets.credits.batch(batch, new Date().toISOString());
    // Batched, not posted: still in transit.
    expect(await status()).toEqual({ lookup: 'pending', payer: 'pending', replay: 'pending' });
    const { wallet } = await hot.wallets.credits.read(hot.shop, []);
    const posted = await hot.wallets.credits.postBatches({
      address: hot.shop,
      wallet,
      batches: [batch],
      postedAt: new Date().toISOString(),
    });
    expect(posted.kind).toBe('posted');
    // Posted and not completed: the credit is not marked posted, but the shop may spend the money.
    const [stored] = await hot.wallets.credits.readBatches([batch.batchId]);
    expect(stored?.completedAt).toBeUndefined();
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 9n, pendingMinor: 0n });
    // Every reader says so alike: a replay of the payment's key said pending until the completion.
    expect(await status()).toEqual({ lookup: 'completed', payer: 'completed', replay: 'completed' });
  });

  it('has the sweep complete a batch whose poster stopped after posting it, and leave one a poster may still complete', async () => {
    const hot = await createHotLedger(2);
    const credits = await payShop(hot, [4, 5, 6]);
    const stopped = { batchId: randomUUID(), address: hot.shop, credits: credits.slice(0, 2) };
    const fresh = { batchId: randomUUID(), address: hot.shop, credits: credits.slice(2) };
    const stoppedAt = new Date(Date.now() - SWEEP_AFTER_MS - 1_000).toISOString();
    for (const [each, postedAt] of [
      [stopped, new Date(stoppedAt)],
      [fresh, new Date()],
    ] as const) {
      await hot.wallets.credits.batch(each, postedAt.toISOString());
      const { wallet } = await hot.wallets.credits.read(hot.shop, []);
      const plan = { address: hot.shop, wallet, batches: [each], postedAt: postedAt.toISOString() };
      expect((await hot.wallets.credits.postBatches(plan)).kind).toBe('posted');
    }
    const sweep = createSweepBatchesHandler({ client, tableName: hot.tableName });

    expect(await sweep()).toEqual({ found: 1, completed: 1, creditsPosted: 2, already: 0, failed: 0 });
    const [swept, left] = await hot.wallets.credits.readBatches([stopped.batchId, fresh.batchId]);
    expect(swept?.completedAt).toBeDefined();
    expect(left?.completedAt).toBeUndefined();
    expect((await entriesOfShop(hot)).map((e) => [e.seq, e.balanceAfter, e.postedAt])).toEqual([
      [1, 4, stoppedAt],
      [2, 9, stoppedAt],
    ]);
    // Dated at the posting (above), when the money became the shop's, as a one-level posting's
    // entries are: their transfer.completed events carry that time. Dated at the completion, as
    // first built, they were a minute late or more (the sweep's wait).
    // Completed once: the next run finds nothing due, and the poster's delivery of its credits posts nothing.
    expect(await sweep()).toMatchObject({ found: 0, completed: 0 });
    const post = makePostCredits({ ledger: hot.wallets.credits, clock: systemClock });
    expect(await post(hot.shop, credits.slice(0, 2))).toEqual({ posted: 0 });
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 15n, pendingMinor: 0n });
  });

  it('refuses a batch that misstates a credit, and a posting that misstates a batch, writing nothing', async () => {
    const hot = await createHotLedger(2);
    const [credit] = await payShop(hot, [25]);
    if (!credit) throw new Error('no credit');
    const listing = { batchId: randomUUID(), address: hot.shop };
    const at = new Date().toISOString();
    // An entry is written from the batch's listing: a listing that is not the credit never stands.
    expect(
      await hot.wallets.credits.batch({ ...listing, credits: [{ ...credit, amountMinor: 2_500 }] }, at),
    ).toBe('credit-taken');
    expect(await hot.wallets.credits.readBatches([listing.batchId])).toEqual([]);
    expect(await hot.wallets.credits.batch({ ...listing, credits: [credit] }, at)).toBe('batched');
    const { wallet } = await hot.wallets.credits.read(hot.shop, []);
    const misstated = { ...listing, credits: [{ ...credit, amountMinor: 2_500 }] };
    const plan = { address: hot.shop, wallet, postedAt: at };
    expect(await hot.wallets.credits.postBatches({ ...plan, batches: [misstated] })).toEqual({
      kind: 'batch-taken',
    });
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 0n, pendingMinor: 25n });
  });

  it('shows a batch not yet posted as its credits: in the pending amount, and each in the pending list', async () => {
    const hot = await createHotLedger(2);
    const announced = await payShop(hot, [40, 2]);
    await hot.wallets.credits.batch(
      { batchId: randomUUID(), address: hot.shop, credits: announced },
      new Date().toISOString(),
    );
    expect(await hot.wallets.readWallet(hot.shop)).toMatchObject({ balanceMinor: 0n, pendingMinor: 42n });
    const list = makeListTransfers({
      history: createHistoryStore({ client, tableName: hot.tableName }),
    });
    const page = await list({ sub: hot.shop, limit: 10 });
    expect(page.pending?.map((c) => [c.transferId, c.amountMinor]).sort()).toEqual(
      announced.map((c) => [c.transferId, c.amountMinor]).sort(),
    );
  });

  it('posts more credits than a transaction holds to one wallet writing its item once', {
    // Room for three deliveries, each cut short at its deadline (35 s) at most: in whole-suite runs
    // the first was cut short 4 times in 5, and the test took 51–82 s. There the suite's other
    // files fill DynamoDB Local's one SQLite thread, and this posting's requests outlast the
    // client's 2 s timeout (REQUEST_TIMEOUT_MS) and are retried: 5 in a row in a run that took 19.5 s.
    timeout: 150_000,
  }, async () => {
    const hot = await createHotLedger(4);
    const announced = await payShop(
      hot,
      Array.from({ length: 150 }, (_, i) => 1 + (i % 7)),
    );
    let walletWrites = 0;
    const credits = hot.wallets.credits;
    const counting = {
      ...credits,
      post(plan: Parameters<typeof credits.post>[0]) {
        walletWrites++;
        return credits.post(plan);
      },
      postBatches(plan: Parameters<typeof credits.postBatches>[0]) {
        walletWrites++;
        return credits.postBatches(plan);
      },
    };
    const post = makePostCredits({ ledger: counting, clock: systemClock });
    let posted = 0;
    let deliveries = 0;
    for (let delivery = 1; ; delivery++) {
      deliveries = delivery;
      try {
        posted += (await post(hot.shop, announced)).posted;
        break;
      } catch (error) {
        // Delivered again, as the stream does with a posting cut short by its deadline: in
        // whole-suite runs DynamoDB Local took past it (51, 60 and 82 s) to complete the postings.
        if (!(error instanceof PostingCutShort) || delivery >= 3) throw error;
        posted += error.posted;
      }
    }
    // 150 credits in 4 batches, taken in by one posting: the wallet's item written once, and
    // once per delivery when one was cut short.
    expect(walletWrites).toBeLessThanOrEqual(deliveries);
    // A cut posting's commit can land after it stopped counting, and the next skips what it finds
    // posted: the count is exact when one delivery did it all, and never counts a credit twice.
    // That every credit is posted once is the ledger's to show (below).
    if (deliveries === 1) expect(posted).toBe(150);
    else expect(posted).toBeLessThanOrEqual(150);
    const entries = await entriesOfShop(hot);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    let balance = 0;
    for (const [i, entry] of entries.entries()) {
      balance += announced.find((c) => c.transferId === entry.transferId)?.amountMinor ?? Number.NaN;
      expect(entry.balanceAfter, `entry ${i + 1}`).toBe(balance);
    }
    expect(new Set(entries.map((e) => e.transferId)).size).toBe(150);
  });
});
