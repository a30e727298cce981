import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createGetBalanceHandler } from '#functions/get-balance/handler.ts';
import { createListTransfersHandler } from '#functions/list-transfers/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { createHistoryStore } from '#shared/wallet/dynamodb/history-store.ts';
import { HISTORY_SHARDS, historyShardOf } from '#shared/wallet/dynamodb/keys.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { apiEvent, invoke } from '../support/events.ts';
import { createHotLedger, type HotLedger, postBatchWithoutCompleting } from '../support/ledger.ts';

/*
 * A hot wallet's history between a batch's posting and its completion (the poster timed out or
 * died between its two steps, until the sweep completes the batch minutes later), on the real
 * functions against DynamoDB Local: the poster's two store steps are driven directly, as
 * credit-batches.test.ts does.
 */

const client = createDocumentClient({ endpoint: inject('env').DYNAMODB_ENDPOINT });
afterAll(() => client.destroy());

interface Page {
  items: { transferId: string; direction: string; amount: number; balanceAfter: number; status: string }[];
  pending?: { transferId: string }[];
  nextCursor?: string;
}

function functionsOf(hot: HotLedger) {
  const access = { client, tableName: hot.tableName, settings: loadWalletSettings() };
  const list = createListTransfersHandler(access);
  const balanceOf = createGetBalanceHandler(access);
  const page = async (query: Record<string, string> = {}): Promise<Page> => {
    const response = await invoke(list, {
      ...apiEvent({ sub: hot.shop, scopes: ['read:wallet'], path: '/api/wallet/transfers' }),
      queryStringParameters: query,
    });
    expect(response.statusCode).toBe(200);
    return response.json;
  };
  const balance = async (): Promise<number> =>
    (await invoke(balanceOf, apiEvent({ sub: hot.shop, scopes: ['read:wallet'] }))).json.balance;
  /** The shop's history page by page, `limit` a page: the pages, at most `bound` of them. */
  const walk = async (limit: number, bound: number): Promise<Page[]> => {
    const pages = [await page({ limit: String(limit) })];
    for (let cursor = pages[0]?.nextCursor; cursor !== undefined && pages.length < bound; ) {
      const next = await page({ limit: String(limit), cursor });
      // An empty page handing its own cursor back has a client ask the same again, for ever.
      expect(next.nextCursor).not.toBe(cursor);
      pages.push(next);
      cursor = next.nextCursor;
    }
    return pages;
  };
  return { page, balance, walk };
}

describe('a hot wallet between a batch posting and its completion', () => {
  it("lists on the first page the batch's credits the balance holds, as its entries (the reviewer's case)", async () => {
    const hot = await createHotLedger(1);
    const payer = hot.payers[0] as string;
    const transferId = await hot.pay(payer, 9);
    await postBatchWithoutCompleting(hot, [transferId]);
    const { page, balance } = functionsOf(hot);
    expect(await balance()).toBe(0.09);
    const first = await page();
    expect(first.pending).toBeUndefined();
    expect(first.items).toEqual([
      expect.objectContaining({
        transferId,
        direction: 'in',
        amount: 0.09,
        balanceAfter: 0.09,
        status: 'completed',
      }),
    ]);
    expect(first.nextCursor).toBeUndefined();
  });

  it('pages its history to the end, never handing a page its own cursor back, while the shop spends', async () => {
    const hot = await createHotLedger(2);
    const [first, second] = hot.payers as [string, string];
    const posted = await hot.pay(first, 5);
    expect(await hot.post([posted])).toBe(1);
    // Seqs 2 and 3: a batch posted into the wallet whose entries are not written.
    const batched = [await hot.pay(second, 9), await hot.pay(first, 4)];
    const batch = await postBatchWithoutCompleting(hot, batched);
    const { balance, walk } = functionsOf(hot);
    expect(await balance()).toBe(0.18);
    // Seq 4: the shop spends the batch's money meanwhile.
    const spent = await hot.pay(hot.shop, 1, { to: first });
    const history = [
      [spent, 0.17],
      [batched[1], 0.18],
      [batched[0], 0.14],
      [posted, 0.05],
    ];

    for (const limit of [1, 2, 3, 10]) {
      const pages = await walk(limit, 10);
      expect(pages.at(-1)?.nextCursor, `limit ${limit}`).toBeUndefined();
      const walked = pages.flatMap((p) => p.items.map((item) => [item.transferId, item.balanceAfter]));
      expect(walked, `limit ${limit}`).toEqual(history);
    }
    // Completed (by the sweep, say): the same history, now from the entries written.
    const [stored] = await hot.wallets.credits.readBatches([batch.batchId]);
    if (!stored) throw new Error('no batch');
    expect(await hot.wallets.credits.complete(stored, new Date().toISOString(), 'sweep')).toBe('completed');
    const after = await walk(1, 10);
    expect(after.flatMap((p) => p.items.map((item) => [item.transferId, item.balanceAfter]))).toEqual(
      history,
    );
  });

  it("pages a batch whose credits run from below a page into it, its shard key holding the page's entry above it", async () => {
    const hot = await createHotLedger(2);
    const pay = (i: number) => hot.pay(hot.payers[i % 2] as string, i + 1);
    const batched: string[] = [];
    for (let i = 0; i < HISTORY_SHARDS; i++) batched.push(await pay(i));
    // Seqs 1..16, keyed at seq 1; then a credit posted on its own at 17, under the same shard key.
    await postBatchWithoutCompleting(hot, batched);
    const alone = await pay(HISTORY_SHARDS);
    expect(await hot.post([alone])).toBe(1);
    expect(historyShardOf(walletAccount(hot.shop), 17)).toBe(historyShardOf(walletAccount(hot.shop), 1));

    const pages = await functionsOf(hot).walk(1, 20);
    expect(pages.at(-1)?.nextCursor).toBeUndefined();
    expect(pages.flatMap((p) => p.items.map((item) => item.transferId))).toEqual([
      alone,
      ...batched.reverse(),
    ]);
  });

  it("tells a cursor's position on a batch credit from an edited one, from the table, before the batch completes", async () => {
    const hot = await createHotLedger(2);
    const [first, second] = hot.payers as [string, string];
    const direct = await hot.pay(first, 5);
    expect(await hot.post([direct])).toBe(1);
    // Seqs 2 and 3: a batch posted into the wallet whose entries are not written.
    const batched = [await hot.pay(second, 9), await hot.pay(first, 4)];
    await postBatchWithoutCompleting(hot, batched);
    const history = createHistoryStore({ client, tableName: hot.tableName });
    // What a replica behind the one a page came from makes the history ask: is a cursor's entry there?
    const entry = await history.entryAt(hot.shop, 3, batched[1]);
    expect(entry).toMatchObject({ seq: 3, transferId: batched[1], direction: 'in', amountMinor: 4 });
    expect(entry?.balanceAfter).toBe(18);
    expect(await history.entryAt(hot.shop, 2, batched[0])).toMatchObject({ seq: 2, transferId: batched[0] });
    // Not at another number, not for another wallet, not without the transfer it should be of.
    expect(await history.entryAt(hot.shop, 2, batched[1])).toBeUndefined();
    expect(await history.entryAt(`nobody-${randomUUID()}`, 3, batched[1])).toBeUndefined();
    expect(await history.entryAt(hot.shop, 3)).toBeUndefined();
    expect(await history.entryAt(hot.shop, 1, direct)).toMatchObject({ seq: 1, transferId: direct });
  });
});
