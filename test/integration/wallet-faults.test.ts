import { describe, expect, it } from 'vitest';
import { createGetBalanceHandler } from '#functions/get-balance/handler.ts';
import { createSendMoneyHandler } from '#functions/send-money/handler.ts';
import type { Fault } from '#infra/local/dynamodb-faults.ts';
import { createDocumentClient, REQUEST_TIMEOUT_MS } from '#shared/dynamodb/client.ts';
import { defaultRetryPolicy } from '#shared/dynamodb/retry.ts';
import { ANSWER_MARGIN_MS } from '#shared/request-deadline.ts';
import { createHotMarkerStore } from '#shared/wallet/dynamodb/hot-marker-store.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { apiEvent, invoke, lambdaContext, sendEvent, uniqueSub } from '../support/events.ts';
import { mentions, notGivenUp, startFaultProxy, storedItem } from '../support/faults.ts';
import { fund } from '../support/wallet.ts';

// The functions, built through their composition roots on a client that goes through the proxy.
const proxy = await startFaultProxy();
const through = {
  client: createDocumentClient({ endpoint: proxy.endpoint }),
  tableName: process.env.WALLETS_TABLE_NAME as string,
  settings: loadWalletSettings(),
};
const send = createSendMoneyHandler(through);
const balance = createGetBalanceHandler(through);

const sendAs = (sub: string, body: unknown, headers: Record<string, string> = {}) =>
  invoke(send, sendEvent(sub, body, headers));

const balanceOf = (sub: string) =>
  invoke(balance, apiEvent({ sub, scopes: ['read:wallet'], method: 'GET', path: '/api/wallet/balance' }));

async function balanceMinor(address: string): Promise<number> {
  const item = await storedItem(process.env.WALLETS_TABLE_NAME, { pk: `WALLET#${address}` });
  return (item?.balance as number | undefined) ?? 0;
}

/** Two funded wallets of this test alone: 10.00 and 0.01. */
async function twoWallets() {
  const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
  await Promise.all([fund(alice, 1_000), fund(bob, 1)]);
  return [alice, bob] as const;
}

/** A send of 1.00 from a function with 10 s left, as Lambda's context tells it. */
/**
 * With 12 s left, no transaction starts after 3 s: a commit may take 8.5 s, and the answer is due
 * 0.5 s before the function's timeout. With 10 s, a transaction had 1 s to start, less than a full
 * run's DynamoDB Local can take to answer the read before it (helper-38).
 */
const sendWithTwelveSecondsLeft = (from: string, to: string) =>
  invoke(send, sendEvent(from, { toAddress: to, amount: 1 }), lambdaContext('send', 12_000));

/** The transfer transactions (not the deposits that funded the wallets) that name `address`. */
const transactions = (address: string) =>
  proxy.requests('TransactWriteItems', (r) => mentions(address)(r) && mentions('TRANSFER#')(r));

describe('send money under faults beneath the SDK', () => {
  it("reads again and commits once when another transaction holds the payer's wallet", async () => {
    const [alice, bob] = await twoWallets();
    // Payments to a hot wallet name only the payer's items: a conflict can only be the payer's.
    await createHotMarkerStore(through).markHot(bob, Date.now() + 60_000);
    proxy.inject(
      { kind: 'transaction-conflict' },
      { operation: 'TransactWriteItems', when: mentions(alice), times: 2 },
    );
    const response = await sendAs(alice, { toAddress: bob, amount: 1 });
    expect(response.statusCode).toBe(200);
    expect(response.json.status).toBe('pending');
    expect(transactions(alice).filter(notGivenUp)).toHaveLength(3);
    // Each retry is a new version built on a fresh read, never the cancelled transaction resent.
    expect(proxy.requests('BatchGetItem', mentions(alice))).toHaveLength(3);
    expect(await balanceMinor(alice)).toBe(900);
  });

  it('marks a recipient whose wallet is in another transaction hot, and pays it through the clearing account at once', async () => {
    const [alice, bob] = await twoWallets();
    proxy.inject(
      { kind: 'transaction-conflict' },
      { operation: 'TransactWriteItems', when: mentions(alice), times: 1 },
    );
    const response = await sendAs(alice, { toAddress: bob, amount: 1 });
    expect(response.statusCode).toBe(200);
    expect(response.json.status).toBe('pending');
    const [direct, viaClearing] = transactions(alice);
    expect(direct?.body).toContain(`WALLET#${bob}`);
    expect(viaClearing?.body).not.toContain(`WALLET#${bob}`);
    expect(await storedItem(process.env.WALLETS_TABLE_NAME, { pk: `INBOUND#${bob}` })).toBeDefined();
    expect([await balanceMinor(alice), await balanceMinor(bob)]).toEqual([900, 1]);
  });

  it.each<[string, Fault]>([
    ['throttling', { kind: 'throttle' }],
    ['a transaction cancelled by throttling', { kind: 'transaction-throttled' }],
    ['500 answers', { kind: 'server-error' }],
    ['connection resets', { kind: 'reset' }],
    ['a stalled DynamoDB', { kind: 'stall' }],
  ])(
    'answers 503 with Retry-After after at most 3 requests to DynamoDB under %s, changing nothing and leaking no SDK message',
    async (_name, fault) => {
      const [alice, bob] = await twoWallets();
      proxy.inject(fault, { operation: 'TransactWriteItems', when: mentions(alice) });
      const response = await sendAs(alice, { toAddress: bob, amount: 1 });
      expect(response.statusCode).toBe(503);
      expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
      expect(response.contentType).toBe('application/problem+json');
      expect(response.body).not.toMatch(
        /exceeds|throughput|timed out|timeout|cancel|socket|ECONN|Exception|at /i,
      );
      // One retry layer: counted on the wire, beneath the SDK's own retry middleware.
      expect(transactions(alice)).toHaveLength(3);
      expect(await balanceMinor(alice)).toBe(1_000);
      expect(await balanceMinor(bob)).toBe(1);
    },
  );

  it('answers 503 with Retry-After after at most 3 reads when DynamoDB leaves the keys of each read unprocessed, changing nothing', async () => {
    const [alice, bob] = await twoWallets();
    proxy.inject({ kind: 'unprocessed' }, { operation: 'BatchGetItem', when: mentions(alice) });
    const sent = await sendAs(alice, { toAddress: bob, amount: 1 });
    const read = await balanceOf(alice);
    for (const response of [sent, read]) {
      expect(response.statusCode).toBe(503);
      expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    }
    // Three reads per call, then the answer: the send's and the balance's.
    expect(proxy.requests('BatchGetItem', mentions(alice))).toHaveLength(6);
    expect(transactions(alice)).toHaveLength(0);
    expect(await balanceMinor(alice)).toBe(1_000);
  });

  it('answers 503 without starting the transaction when the read before it took the time a transaction may need', async () => {
    const [alice, bob] = await twoWallets();
    // 12 s left: the read of both wallets stalls twice (two request timeouts, 4 s) and then answers;
    // a transaction started after that could stall three times more, past the function's timeout.
    proxy.inject({ kind: 'stall' }, { operation: 'BatchGetItem', when: mentions(alice), times: 2 });
    proxy.inject({ kind: 'stall' }, { operation: 'TransactWriteItems', when: mentions(alice) });
    const response = await sendWithTwelveSecondsLeft(alice, bob);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('BatchGetItem', mentions(alice))).toHaveLength(3);
    expect(transactions(alice)).toHaveLength(0);
    expect(await balanceMinor(alice)).toBe(1_000);
  });

  it('answers 503 without reading again when a transaction started in time comes back refused after the last moment to start one', async () => {
    const [alice, bob] = await twoWallets();
    // 12 s left, so no transaction starts after 3 s. This one starts after a read answered 1.1 s
    // late (a loaded DynamoDB Local), stalls twice (two request timeouts) and is then cancelled by a
    // conflict, at about 5.5 s; reads after the first stall three times, which would take 6.5 s
    // more: past the function's timeout.
    proxy.inject({ kind: 'stall' }, { operation: 'TransactWriteItems', when: mentions(alice), times: 2 });
    proxy.inject(
      { kind: 'transaction-conflict' },
      { operation: 'TransactWriteItems', when: mentions(alice) },
    );
    let reads = 0;
    proxy.inject(
      { kind: 'stall' },
      { operation: 'BatchGetItem', when: (r) => mentions(alice)(r) && ++reads > 1 },
    );
    // With 10 s left, this failed every time: no transaction had started by 1 s.
    proxy.inject(
      { kind: 'delay', ms: 1_100 },
      { operation: 'BatchGetItem', when: mentions(alice), times: 1 },
    );
    const response = await sendWithTwelveSecondsLeft(alice, bob);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('BatchGetItem', mentions(alice))).toHaveLength(1);
    expect(transactions(alice)).toHaveLength(3);
    expect(await balanceMinor(alice)).toBe(1_000);
  });

  it('answers 503, not 500, for a balance read while connections to DynamoDB are reset', async () => {
    const [alice] = await twoWallets();
    proxy.inject({ kind: 'reset' }, { operation: 'BatchGetItem', when: mentions(alice) });
    const response = await balanceOf(alice);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('BatchGetItem', mentions(alice))).toHaveLength(3);
    expect(response.body).not.toMatch(/socket|ECONN|hang up|Exception|at /i);
  });

  // The read's answer comes at once, or late as a loaded DynamoDB Local gives it. Whether the
  // write's second try fits depends on that (it must start by 7.5 s), so the test holds what is
  // true either way: the write stopped for the deadline, short of its tries, and answered only once
  // no try would fit. An exact count of two tries fails every time on the late answer.
  it.each([
    ['answered at once', 0],
    ['answered 1.5 s late', 1_500],
  ])(
    "answers 503 before the function's timeout when a balance's calls, each in its own time, stall one after another (the read %s)",
    async (_, lateMs) => {
      const carol = uniqueSub('carol');
      // 10 s left, a wallet not opened yet: the read stalls twice (two request timeouts) and then
      // answers, and the write that opens the wallet stalls every time. Each call's three tries fit
      // the function's timeout, the two one after another do not.
      proxy.inject({ kind: 'stall' }, { operation: 'BatchGetItem', when: mentions(carol), times: 2 });
      proxy.inject(
        { kind: 'delay', ms: lateMs },
        { operation: 'BatchGetItem', when: mentions(carol), times: 1 },
      );
      // The opening is one TransactWriteItems: the wallet and its address's skeleton claim.
      proxy.inject({ kind: 'stall' }, { operation: 'TransactWriteItems', when: mentions(carol) });
      const context = lambdaContext('balance', 10_000);
      const response = await invoke(
        balance,
        apiEvent({ sub: carol, scopes: ['read:wallet'], method: 'GET', path: '/api/wallet/balance' }),
        context,
      );
      expect(response.statusCode).toBe(503);
      expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
      const left = context.getRemainingTimeInMillis();
      expect(left).toBeGreaterThan(0);
      // Answered only once another try could have run into its request timeout past the deadline.
      expect(left).toBeLessThan(ANSWER_MARGIN_MS + REQUEST_TIMEOUT_MS);
      expect(proxy.requests('BatchGetItem', mentions(carol))).toHaveLength(3);
      const writes = proxy.requests('TransactWriteItems', mentions(carol)).length;
      expect(writes).toBeGreaterThan(0);
      expect(writes).toBeLessThan(defaultRetryPolicy.attempts);
    },
  );

  it('does not debit twice when a commit succeeded but its response was lost, within one request', async () => {
    const [alice, bob] = await twoWallets();
    proxy.inject(
      { kind: 'lose-response' },
      { operation: 'TransactWriteItems', when: mentions(alice), times: 1 },
    );
    const response = await sendAs(alice, { toAddress: bob, amount: 1 });
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({ fromAddress: alice, toAddress: bob, amount: 1 });
    expect(transactions(alice)).toHaveLength(2);
    expect(await balanceMinor(alice)).toBe(900);
    expect(await balanceMinor(bob)).toBe(101);
  });

  it('answers the transfer, not 503, when it committed but the answer of every try was lost', async () => {
    const [alice, bob] = await twoWallets();
    proxy.inject({ kind: 'lose-response' }, { operation: 'TransactWriteItems', when: mentions(alice) });
    const response = await sendAs(alice, { toAddress: bob, amount: 1 });
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({
      fromAddress: alice,
      toAddress: bob,
      amount: 1,
      status: 'completed',
    });
    expect(transactions(alice)).toHaveLength(3);
    expect(await balanceMinor(alice)).toBe(900);
    expect(await balanceMinor(bob)).toBe(101);
  });

  it('replays from the key record once DynamoDB has forgotten the request token (after 10 minutes)', async () => {
    const [alice, bob] = await twoWallets();
    const headers = { 'Idempotency-Key': `late-${alice}` };
    const first = await sendAs(alice, { toAddress: bob, amount: 3 }, headers);
    expect(first.statusCode).toBe(200);
    // DynamoDB honours a ClientRequestToken for 10 minutes only: a later retry is a new transaction.
    proxy.inject(
      { kind: 'rewrite', rewrite: (body) => ({ ...body, ClientRequestToken: crypto.randomUUID() }) },
      { operation: 'TransactWriteItems', when: mentions(alice) },
    );
    const late = await sendAs(alice, { toAddress: bob, amount: 3 }, headers);
    expect(late.statusCode).toBe(200);
    expect(late.headers?.['idempotent-replayed']).toBe('true');
    expect(late.json.transferId).toBe(first.json.transferId);
    const other = await sendAs(alice, { toAddress: bob, amount: 4 }, headers);
    expect(other.statusCode).toBe(422);
    expect(await balanceMinor(alice)).toBe(700);
  });

  it('returns the original transfer when the client retries with its key after losing the response', async () => {
    const [alice, bob] = await twoWallets();
    const headers = { 'Idempotency-Key': `lost-${alice}` };
    // The commit lands, but every answer is lost, and so is the read that would have settled it:
    // the client sees a 503 and retries later.
    proxy.inject({ kind: 'lose-response' }, { operation: 'TransactWriteItems', when: mentions(alice) });
    proxy.inject({ kind: 'reset' }, { operation: 'BatchGetItem', when: mentions('"TRANSFER#'), times: 1 });
    const lost = await sendAs(alice, { toAddress: bob, amount: 2 }, headers);
    expect(lost.statusCode).toBe(503);
    expect(await balanceMinor(alice)).toBe(800);

    proxy.heal();
    const retried = await sendAs(alice, { toAddress: bob, amount: 2 }, headers);
    expect(retried.statusCode).toBe(200);
    expect(retried.headers?.['idempotent-replayed']).toBe('true');
    expect(retried.json).toMatchObject({ fromAddress: alice, toAddress: bob, amount: 2 });
    expect(await balanceMinor(alice)).toBe(800);
    expect(await balanceMinor(bob)).toBe(201);
  });
});
