import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { createHotMarkerStore } from '#shared/wallet/dynamodb/hot-marker-store.ts';
import { uniqueSub } from '../support/events.ts';
import { call, expectProblem, fundViaCli, gateway, openWallet, tokenFor } from './http.ts';

/*
 * A payment's `reference` and `metadata` (issue 46, "What a merchant matches a payment on"):
 * stored on the transfer, in send's answer, both sides' history and the lookup, and part of what
 * an Idempotency-Key stands for. Through the local gateway, real tokens and DynamoDB Local.
 */

async function caller() {
  const sub = uniqueSub('match');
  return { sub, token: await tokenFor('read:wallet write:wallet', { sub }) };
}

const send = (token: string, json: unknown, headers: Record<string, string> = {}) =>
  call('POST', '/api/wallet/send', { token, json, headers });

interface HistoryLine {
  readonly transferId: string;
  readonly reference?: string;
  readonly metadata?: Record<string, string>;
}

async function historyLine(token: string, transferId: string): Promise<HistoryLine | undefined> {
  const page = await call('GET', '/api/wallet/transfers?limit=100', { token });
  expect(page.status).toBe(200);
  return (page.json as { items: HistoryLine[] }).items.find((item) => item.transferId === transferId);
}

const METADATA = { orderId: 'ord_8812', 'customer email': 'ana@example.com', note: 'Größe M, ½ kg' };

describe('reference and metadata on a payment', () => {
  it('are answered by send, listed in both histories and shown by the lookup, as sent', async () => {
    const alice = await caller();
    const shop = await caller();
    await fundViaCli(alice.sub, '50');
    await openWallet(shop.sub);
    const sent = await send(alice.token, {
      toAddress: shop.sub,
      amount: 12.34,
      reference: 'INV-2026-0042',
      metadata: METADATA,
    });
    expect(sent.status).toBe(200);
    const transfer = sent.json as { transferId: string };
    expect(sent.json).toMatchObject({ reference: 'INV-2026-0042', metadata: METADATA });
    for (const token of [alice.token, shop.token]) {
      expect(await historyLine(token, transfer.transferId)).toMatchObject({
        reference: 'INV-2026-0042',
        metadata: METADATA,
      });
      const lookup = await call('GET', `/api/wallet/transfers/${transfer.transferId}`, { token });
      expect(lookup.json).toMatchObject({ reference: 'INV-2026-0042', metadata: METADATA });
    }
  });

  it('reach the history of a hot wallet from its posted credit, whose entry does not carry them', async () => {
    const alice = await caller();
    const shop = await caller();
    await fundViaCli(alice.sub, '50');
    await openWallet(shop.sub);
    const stack = await readRunningStack(gateway.port, gateway.stateDir);
    if (!stack) throw new Error('The e2e stack is not running');
    const client = createDocumentClient({ endpoint: stack.dynamodbEndpoint });
    try {
      const marked = await createHotMarkerStore({
        client,
        tableName: stack.env.WALLETS_TABLE_NAME as string,
      }).markHot(shop.sub, Date.now() + 60_000);
      expect(marked).toBeGreaterThan(0);
    } finally {
      client.destroy();
    }
    const sent = await send(alice.token, {
      toAddress: shop.sub,
      amount: 1,
      reference: 'hot-1',
      metadata: { a: 'b' },
    });
    expect(sent.json).toMatchObject({ status: 'pending', reference: 'hot-1' });
    const transferId = (sent.json as { transferId: string }).transferId;
    let line: HistoryLine | undefined;
    for (let i = 0; i < 100 && !line; i++) {
      line = await historyLine(shop.token, transferId);
      if (!line) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(line).toMatchObject({ reference: 'hot-1', metadata: { a: 'b' } });
  });

  it('leave both out of the answer when the payment has none', async () => {
    const alice = await caller();
    const bob = await caller();
    await fundViaCli(alice.sub, '5');
    await openWallet(bob.sub);
    const sent = await send(alice.token, { toAddress: bob.sub, amount: 1, metadata: {} });
    expect(sent.status).toBe(200);
    expect(sent.json).not.toHaveProperty('reference');
    expect(sent.json).not.toHaveProperty('metadata');
  });

  it('are part of what an Idempotency-Key stands for: other metadata is refused, the same in another order replays', async () => {
    const alice = await caller();
    const bob = await caller();
    await fundViaCli(alice.sub, '10');
    await openWallet(bob.sub);
    const key = { 'idempotency-key': randomUUID() };
    const body = { toAddress: bob.sub, amount: 1, reference: 'r-1', metadata: { a: '1', b: '2' } };
    const first = await send(alice.token, body, key);
    expect(first.status).toBe(200);
    const reordered = await send(alice.token, { ...body, metadata: { b: '2', a: '1' } }, key);
    expect(reordered.status).toBe(200);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    expect(reordered.json).toEqual(first.json);
    for (const changed of [
      { ...body, metadata: { a: '1', b: '3' } },
      { ...body, metadata: { a: '1' } },
      { ...body, reference: 'r-2' },
      { toAddress: bob.sub, amount: 1, metadata: body.metadata },
    ]) {
      expect(expectProblem(await send(alice.token, changed, key), 422).type).toMatch(
        /idempotency-key-reused$/,
      );
    }
    expect((await call('GET', '/api/wallet/balance', { token: alice.token })).json).toMatchObject({
      balance: 9,
    });
  });

  it.each([
    ['a reference over 128 characters', { reference: 'x'.repeat(129) }, '/reference'],
    ['an empty reference', { reference: '' }, '/reference'],
    ['a reference with a character beyond printable ASCII', { reference: 'café' }, '/reference'],
    ['a reference with a control character', { reference: 'a\tb' }, '/reference'],
    [
      'more than 20 metadata keys',
      { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) },
      '/metadata',
    ],
    ['a metadata key over 40 characters', { metadata: { ['k'.repeat(41)]: 'v' } }, '/metadata'],
    ['an empty metadata key', { metadata: { '': 'v' } }, '/metadata'],
    ['a metadata value over 500 characters', { metadata: { k: 'v'.repeat(501) } }, '/metadata/k'],
    ['a metadata value that is not a string', { metadata: { k: 1 } }, '/metadata/k'],
    ['metadata that is not an object', { metadata: ['a'] }, '/metadata'],
  ])('refuses %s with a 422 naming it, and moves nothing', async (_name, extra, pointer) => {
    const alice = await caller();
    const bob = await caller();
    await fundViaCli(alice.sub, '5');
    await openWallet(bob.sub);
    const problem = expectProblem(await send(alice.token, { toAddress: bob.sub, amount: 1, ...extra }), 422);
    expect(JSON.stringify(problem)).toContain(pointer);
    expect((await call('GET', '/api/wallet/balance', { token: alice.token })).json).toMatchObject({
      balance: 5,
    });
  });

  it('takes the bounds themselves: 128 printable characters, 20 keys of 40, values of 500', async () => {
    const alice = await caller();
    const bob = await caller();
    await fundViaCli(alice.sub, '5');
    await openWallet(bob.sub);
    const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    const metadata = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [
        `${String(i).padStart(2, '0')}${'k'.repeat(38)}`,
        'v'.repeat(500),
      ]),
    );
    const reference = printable.padEnd(128, '~');
    const sent = await send(alice.token, { toAddress: bob.sub, amount: 1, reference, metadata });
    expect(sent.status).toBe(200);
    expect(sent.json).toMatchObject({ reference, metadata });
  });
});
