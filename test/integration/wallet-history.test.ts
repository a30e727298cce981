import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { handler as getBalance } from '#functions/get-balance/handler.ts';
import { handler as getTransfer } from '#functions/get-transfer/handler.ts';
import { createListTransfersHandler, handler as listTransfers } from '#functions/list-transfers/handler.ts';
import { handler as send } from '#functions/send-money/handler.ts';
import type { ProxiedRequest } from '#infra/local/dynamodb-faults.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import {
  HISTORY_SHARD_INDEX,
  HISTORY_SHARDS,
  PENDING_INDEX,
  PENDING_SHARDS,
  pendingShardKey,
} from '#shared/wallet/dynamodb/keys.ts';
import { makePostCredits } from '#shared/wallet/hot-wallet/post-credits.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { creditsInTransit, entryItemsByKey } from '../support/credits.ts';
import { apiEvent, invoke, sendEvent, uniqueSub } from '../support/events.ts';
import { mentions, proxiedClient, startFaultProxy } from '../support/faults.ts';
import { fund, open, walletLedger } from '../support/wallet.ts';

interface Item {
  transferId: string;
  direction: 'in' | 'out';
  kind: 'transfer' | 'deposit';
  counterparty?: string;
  amount: number;
  currency: string;
  createdAt: string;
  balanceAfter: number;
  status: 'pending' | 'completed';
}

// For the hot wallet's first page read while a posting or a batching lands (below).
const proxy = await startFaultProxy();

const sendAs = (sub: string, toAddress: string, amount: string) =>
  invoke(send, sendEvent(sub, `{"toAddress":${JSON.stringify(toAddress)},"amount":${amount}}`));

const page = (sub: string, query: Record<string, string> = {}, handler = listTransfers) =>
  invoke(handler, {
    ...apiEvent({ sub, scopes: ['read:wallet'], path: '/api/wallet/transfers' }),
    queryStringParameters: query,
  });

const lookUp = (sub: string, transferId: string) =>
  invoke(
    getTransfer,
    apiEvent({
      sub,
      scopes: ['read:wallet'],
      path: `/api/wallet/transfers/${transferId}`,
      resource: '/api/wallet/transfers/{transferId}',
      pathParameters: { transferId },
    }),
  );

/** Every item of a wallet's history, page by page. */
async function wholeHistory(sub: string, limit: number, between?: () => Promise<unknown>): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | undefined;
  do {
    const response = await page(sub, { limit: String(limit), ...(cursor ? { cursor } : {}) });
    expect(response.statusCode).toBe(200);
    expect(response.json.items.length).toBeLessThanOrEqual(limit);
    items.push(...response.json.items);
    cursor = response.json.nextCursor;
    await between?.();
  } while (cursor);
  return items;
}

/** Each line's balance is the next older line's balance plus or minus its own amount (in cents). */
function expectUnbrokenChain(items: readonly Item[]) {
  const cents = (n: number) => Math.round(n * 100);
  for (let i = 0; i < items.length - 1; i++) {
    const [newer, older] = [items[i] as Item, items[i + 1] as Item];
    const signed = newer.direction === 'in' ? cents(newer.amount) : -cents(newer.amount);
    expect(cents(newer.balanceAfter), JSON.stringify({ newer, older })).toBe(
      cents(older.balanceAfter) + signed,
    );
  }
  const first = items.at(-1) as Item;
  expect(cents(first.balanceAfter)).toBe(
    first.direction === 'in' ? cents(first.amount) : -cents(first.amount),
  );
}

describe('GET /api/wallet/transfers', () => {
  it("lists the caller's movements newest first, each with the balance after it, summing to the balance", async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 10_000);
    await open(bob);
    expect((await sendAs(alice, bob, '12.34')).statusCode).toBe(200);
    expect((await sendAs(alice, bob, '0.66')).statusCode).toBe(200);
    expect((await sendAs(bob, alice, '1.00')).statusCode).toBe(200);

    const response = await page(alice);
    expect(response.statusCode).toBe(200);
    expect(response.json.nextCursor).toBeUndefined();
    const items = response.json.items as Item[];
    expect(items.map((i) => [i.kind, i.direction, i.counterparty, i.amount, i.balanceAfter])).toEqual([
      ['transfer', 'in', bob, 1, 88],
      ['transfer', 'out', bob, 0.66, 87],
      ['transfer', 'out', bob, 12.34, 87.66],
      ['deposit', 'in', undefined, 100, 100],
    ]);
    expect(response.body).toContain('"balanceAfter":87.00');
    const balance = (await invoke(getBalance, apiEvent({ sub: alice, scopes: ['read:wallet'] }))).json
      .balance;
    expect(items[0]?.balanceAfter).toBe(balance);
    expectUnbrokenChain(items);
  });

  it('pages without duplicates or gaps while transfers keep arriving, and ends with a last page without cursor', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 100_000);
    await open(bob);
    for (let i = 1; i <= 9; i++) expect((await sendAs(alice, bob, `${i}.00`)).statusCode).toBe(200);
    // 10 movements so far (a deposit and 9 transfers); more arrive after every page.
    const arriving: Promise<unknown>[] = [];
    const items = await wholeHistory(alice, 3, async () => {
      arriving.push(sendAs(alice, bob, '0.01'), sendAs(bob, alice, '0.01'));
    });
    await Promise.all(arriving);
    const ids = items.map((i) => i.transferId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(items.at(-1)?.kind).toBe('deposit');
    expect(items.length).toBeGreaterThanOrEqual(10);
    expectUnbrokenChain(items);
  });

  it('answers a page of exactly the remaining items with no cursor', async () => {
    const alice = uniqueSub('alice');
    await fund(alice, 100);
    await fund(alice, 200);
    const first = await page(alice, { limit: '1' });
    expect(first.json.items).toHaveLength(1);
    const last = await page(alice, { limit: '1', cursor: first.json.nextCursor });
    expect(last.json.items).toHaveLength(1);
    expect(last.json.nextCursor).toBeUndefined();
    expect((await page(alice, { limit: '2' })).json.nextCursor).toBeUndefined();
    expect((await page(uniqueSub('nobody'))).json).toEqual({ items: [] });
  });

  it.each([['0'], ['101'], ['-1'], ['1.5'], ['ten'], ['1e2'], ['0100']])(
    'refuses limit=%s with 400',
    async (limit) => {
      const response = await page(uniqueSub(), { limit });
      expect(response.statusCode).toBe(400);
      expect(response.json.type).toMatch(/invalid-parameter$/);
    },
  );

  it('accepts limit=100', async () => {
    expect((await page(uniqueSub(), { limit: '100' })).statusCode).toBe(200);
  });

  it("refuses an edited cursor, another caller's cursor and garbage with 400, reading nothing of anyone", async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await fund(bob, 1_000);
    for (const amount of ['1.00', '2.00', '3.00']) await sendAs(alice, bob, amount);
    const cursor = (await page(alice, { limit: '1' })).json.nextCursor as string;
    expect((await page(alice, { limit: '1', cursor })).statusCode).toBe(200);

    const [seq, transferId, tag] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const refused = [
      forge([seq - 1, transferId, tag]),
      // Above the newest entry: a position no page gave, which the index lacks for good.
      forge([seq + 1, transferId, tag]),
      forge([seq + 100, randomUUID(), tag]),
      forge([seq, randomUUID(), tag]),
      forge([seq, transferId, 'x'.repeat(16)]),
      `${cursor}A`,
      'not a cursor',
      'x'.repeat(5000),
    ];
    for (const bad of refused) {
      const response = await page(alice, { cursor: bad });
      expect(response.statusCode, bad).toBe(400);
      expect(response.json.type).toMatch(/invalid-parameter$/);
    }
    // Bob's entry at the same position is the very same transfer: only the binding tells them apart.
    const foreign = await page(bob, { cursor });
    expect(foreign.statusCode).toBe(400);
  });

  it('refuses a token without read:wallet', async () => {
    const response = await invoke(listTransfers, apiEvent({ scopes: ['write:wallet'] }));
    expect(response.statusCode).toBe(403);
  });
});

describe('the history of a hot wallet', () => {
  const client = createDocumentClient({ endpoint: inject('env').DYNAMODB_ENDPOINT });
  afterAll(() => client.destroy());
  const tableName = inject('env').WALLETS_TABLE_NAME as string;
  const listThroughProxy = createListTransfersHandler({
    client: proxiedClient(proxy),
    tableName,
    settings: loadWalletSettings(),
  });
  /** A merchant marked hot, which payments reach as credits in transit, and a funded payer. */
  async function hotMerchant(): Promise<{ merchant: string; payer: string }> {
    const merchant = uniqueSub('merchant');
    const payer = uniqueSub('payer');
    await fund(merchant, 100);
    await fund(payer, 200);
    await walletLedger().hotMarker.markHot(merchant, Date.now() + 60_000);
    return { merchant, payer };
  }

  it('pages its posted credits among its own movements in order, full pages, none of them under its one history key', async () => {
    const merchant = uniqueSub('merchant');
    // More credits than shards, so that a page holds several entries of one shard.
    const payers = Array.from({ length: HISTORY_SHARDS + 4 }, () => uniqueSub('payer'));
    const supplier = uniqueSub('supplier');
    await fund(merchant, 10_000);
    await open(supplier);
    for (const payer of payers) await fund(payer, 10_000);
    await walletLedger().hotMarker.markHot(merchant, Date.now() + 60_000);
    for (const [i, payer] of payers.entries()) {
      const response = await sendAs(payer, merchant, `${i + 1}.00`);
      expect(response.json.status).toBe('pending');
    }
    const post = makePostCredits({ ledger: walletLedger().credits, clock: systemClock });
    const credits = (await creditsInTransit(client, tableName)).get(merchant) ?? [];
    expect((await post(merchant, credits)).posted).toBe(payers.length);
    expect((await sendAs(merchant, supplier, '0.50')).statusCode).toBe(200);

    // Entry 1 the deposit, 2..21 the posted credits (1.00, 2.00, …), 22 the merchant's own payment.
    const expected: [string, number, number][] = [['in', 100, 100]];
    let balance = 100;
    for (let amount = 1; amount <= payers.length; amount++) {
      balance += amount;
      expected.unshift(['in', amount, balance]);
    }
    expected.unshift(['out', 0.5, balance - 0.5]);
    const limit = HISTORY_SHARDS + 4;
    expect((await page(merchant, { limit: String(limit) })).json.items).toHaveLength(limit);
    const items = await wholeHistory(merchant, limit);
    expect(items.map((i) => [i.direction, i.amount, i.balanceAfter])).toEqual(expected);
    expectUnbrokenChain(items);
    expect(items.every((i) => i.status === 'completed')).toBe(true);

    // The wallet's one `history` key holds only what its own transactions wrote; the posted
    // credits' entries are spread over every shard.
    const [own, ...shards] = [...(await entryItemsByKey(client, tableName, merchant)).values()].map((items) =>
      items.map((item) => item.seq as number).sort((a, b) => a - b),
    );
    expect(own).toEqual([1, expected.length]);
    expect(shards).toHaveLength(HISTORY_SHARDS);
    expect(shards.flat().sort((a, b) => a - b)).toEqual(
      Array.from({ length: payers.length }, (_, i) => i + 2),
    );
    expect(shards.every((seqs) => seqs.length > 0)).toBe(true);
  });

  /**
   * How long the tests below wait for the page's reads to reach the fault proxy: vitest's default,
   * 1 s, was less than DynamoDB Local can take in a full run (helper-38; `slowFirstRead` pins it).
   */
  const PATIENCE = { timeout: 30_000, interval: 20 };
  /** The page's first read of the wallet answered 1.2 s late, as a loaded DynamoDB Local may. */
  const slowFirstRead = (merchant: string) =>
    proxy.inject(
      { kind: 'delay', ms: 1_200 },
      { operation: 'BatchGetItem', when: mentions(merchant), times: 1 },
    );

  it('lists a credit posted while its first page is read once, whichever read the posting falls between', async () => {
    // The fault proxy holds one kind of the page's Queries until the credit is posted: the
    // posting then lands between the page's reads of the credits in transit and of the entries.
    const { merchant, payer } = await hotMerchant();
    const post = makePostCredits({ ledger: walletLedger().credits, clock: systemClock });
    const queriesOf =
      (index: string) =>
      (request: ProxiedRequest): boolean =>
        request.body.includes(`"IndexName":"${index}"`) && mentions(merchant)(request);
    const [pendingQueries, postedQueries] = [queriesOf(PENDING_INDEX), queriesOf(HISTORY_SHARD_INDEX)];
    /** Every Query of `which` sent so far has its answer. */
    const answered = (which: (request: ProxiedRequest) => boolean) =>
      vi.waitFor(
        () => expect(proxy.answered('Query', which)).toHaveLength(proxy.requests('Query', which).length),
        PATIENCE,
      );

    for (const [held, other, heldCount] of [
      [pendingQueries, postedQueries, PENDING_SHARDS],
      [postedQueries, pendingQueries, HISTORY_SHARDS],
    ] as const) {
      const paid = await sendAs(payer, merchant, '1.00');
      expect(paid.json.status).toBe('pending');
      const credits = (await creditsInTransit(client, tableName)).get(merchant) ?? [];
      let release = () => {};
      proxy.heal();
      proxy.inject(
        { kind: 'hold', until: new Promise<void>((resolve) => (release = resolve)) },
        {
          operation: 'Query',
          when: held,
        },
      );
      slowFirstRead(merchant);
      const read = page(merchant, {}, listThroughProxy);
      await vi.waitFor(() => expect(proxy.requests('Query', held)).toHaveLength(heldCount), PATIENCE);
      await answered(other);
      expect((await post(merchant, credits)).posted).toBe(1);
      release();
      const { json } = await read;
      const listed = [...json.items, ...(json.pending ?? [])].filter(
        (line: { transferId: string }) => line.transferId === paid.json.transferId,
      );
      expect(listed.map((line: Item) => line.status)).toEqual(['completed']);
    }
  });

  it('lists a credit in transit once while a poller batches it during the first page, whichever shard is read last', async () => {
    // Batching moves a credit out of its own shard of the `pending` index and its batch into
    // another: the proxy holds the page's Query of one of the two until the batch is written, so
    // that shard is read after the batching and every other before it.
    const { merchant, payer } = await hotMerchant();
    for (const heldShard of ['credit', 'batch'] as const) {
      const paid = await sendAs(payer, merchant, '1.00');
      expect(paid.json.status).toBe('pending');
      const { transferId } = paid.json;
      const credits = ((await creditsInTransit(client, tableName)).get(merchant) ?? []).filter(
        (credit) => credit.transferId === transferId,
      );
      const creditShard = pendingShardKey(merchant, transferId);
      let batchId = randomUUID();
      while (pendingShardKey(merchant, batchId) === creditShard) batchId = randomUUID();
      const held = heldShard === 'credit' ? creditShard : pendingShardKey(merchant, batchId);
      const pendingQueries = (request: ProxiedRequest) =>
        request.body.includes(`"IndexName":"${PENDING_INDEX}"`) && mentions(merchant)(request);
      const heldQuery = (request: ProxiedRequest) =>
        pendingQueries(request) && request.body.includes(JSON.stringify(held));
      let release = () => {};
      proxy.heal();
      proxy.inject(
        { kind: 'hold', until: new Promise<void>((resolve) => (release = resolve)) },
        { operation: 'Query', when: heldQuery },
      );
      const before = proxy.requests('Query', pendingQueries).length;
      slowFirstRead(merchant);
      const read = page(merchant, {}, listThroughProxy);
      await vi.waitFor(() => {
        expect(proxy.requests('Query', pendingQueries).length - before).toBeGreaterThanOrEqual(
          PENDING_SHARDS,
        );
        expect(proxy.answered('Query', pendingQueries).length - before).toBeGreaterThanOrEqual(
          PENDING_SHARDS - 1,
        );
      }, PATIENCE);
      expect(
        await walletLedger().credits.batch({ batchId, address: merchant, credits }, new Date().toISOString()),
      ).toBe('batched');
      release();
      const { json } = await read;
      const listed = [...json.items, ...(json.pending ?? [])].filter(
        (line: { transferId: string }) => line.transferId === transferId,
      );
      expect(listed, heldShard).toHaveLength(1);
      // The balance, read now, holds it once too.
      const balance = await invoke(getBalance, apiEvent({ sub: merchant, scopes: ['read:wallet'] }));
      expect(balance.json.pending).toBe(heldShard === 'credit' ? 1 : 2);
    }
  });
});

describe('GET /api/wallet/transfers/{transferId}', () => {
  it('shows a transfer to both its parties and to nobody else (404)', async () => {
    const [alice, bob, eve] = [uniqueSub('alice'), uniqueSub('bob'), uniqueSub('eve')];
    await fund(alice, 1_000);
    await open(bob);
    const sent = await sendAs(alice, bob, '2.50');
    const { transferId } = sent.json;
    for (const party of [alice, bob]) {
      const response = await lookUp(party, transferId);
      expect(response.statusCode).toBe(200);
      expect(response.json).toEqual({
        transferId,
        kind: 'transfer',
        fromAddress: alice,
        toAddress: bob,
        amount: 2.5,
        currency: 'USD',
        status: 'completed',
        createdAt: sent.json.createdAt,
      });
    }
    const other = await lookUp(eve, transferId);
    expect(other.statusCode).toBe(404);
    expect((await lookUp(alice, randomUUID())).json).toEqual({
      ...other.json,
      requestId: expect.any(String),
    });
    expect((await lookUp(alice, 'not-an-id')).statusCode).toBe(404);
  });

  it('shows a deposit to the wallet it credited, without a payer', async () => {
    const alice = uniqueSub('alice');
    await fund(alice, 700);
    const [item] = (await page(alice)).json.items as Item[];
    const response = await lookUp(alice, item?.transferId as string);
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({ kind: 'deposit', toAddress: alice, amount: 7 });
    expect(response.json).not.toHaveProperty('fromAddress');
  });
});
