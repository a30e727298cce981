import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { call, expectProblem, fundViaCli, tokenFor } from './http.ts';

/** The wallet through the local gateway: real tokens, real authorizer and handlers, DynamoDB Local. */

async function caller(scope = 'read:wallet write:wallet') {
  const sub = uniqueSub('wallet');
  return { sub, token: await tokenFor(scope, { sub }) };
}

const balance = (token: string) => call('GET', '/api/wallet/balance', { token });
const sendMoney = (token: string, json: unknown, headers: Record<string, string> = {}) =>
  call('POST', '/api/wallet/send', { token, json, headers });

describe('GET /api/wallet/balance', () => {
  it('answers 0 for a new wallet, and the funded amount after wallet:fund', async () => {
    const { sub, token } = await caller();
    expect((await balance(token)).json).toEqual({ address: sub, balance: 0, currency: 'USD' });
    const funded = await fundViaCli(sub, '25.50');
    expect(funded.balance).toBe('25.50');
    const after = await balance(token);
    expect(after.status).toBe(200);
    expect(after.text).toContain('"balance":25.50');
  });

  it('answers 401 without a token and 403 without read:wallet', async () => {
    const unauthorized = expectProblem(await call('GET', '/api/wallet/balance'), 401);
    expect(unauthorized.type).toMatch(/unauthorized$/);
    const { token } = await caller('write:wallet');
    const forbidden = await balance(token);
    expectProblem(forbidden, 403);
    expect(forbidden.headers.get('www-authenticate')).toContain('insufficient_scope');
  });
});

describe('POST /api/wallet/send', () => {
  it('moves money and answers with the transfer', async () => {
    const alice = await caller();
    const bob = await caller();
    await fundViaCli(alice.sub, '100');
    const sent = await sendMoney(alice.token, { toAddress: bob.sub, amount: 0.1 });
    expect(sent.status).toBe(200);
    expect(sent.json).toMatchObject({
      fromAddress: alice.sub,
      toAddress: bob.sub,
      amount: 0.1,
      currency: 'USD',
      status: 'completed',
    });
    expect((await balance(alice.token)).json).toMatchObject({ balance: 99.9 });
    expect((await balance(bob.token)).json).toMatchObject({ balance: 0.1 });
  });

  it('answers 422 insufficient-funds and changes nothing', async () => {
    const alice = await caller();
    await fundViaCli(alice.sub, '1');
    const refused = expectProblem(
      await sendMoney(alice.token, { toAddress: uniqueSub(), amount: 1.01 }),
      422,
    );
    expect(refused.type).toMatch(/insufficient-funds$/);
    expect((await balance(alice.token)).json).toMatchObject({ balance: 1 });
  });

  it.each([
    ['a string amount', '{"toAddress":"x","amount":"5"}', '/amount'],
    ['three decimals', '{"toAddress":"x","amount":0.001}', '/amount'],
    ['a float artefact', '{"toAddress":"x","amount":0.30000000000000004}', '/amount'],
    ['an overflowing number', '{"toAddress":"x","amount":1e400}', '/amount'],
    ['negative zero', '{"toAddress":"x","amount":-0}', '/amount'],
    ['an unknown property', '{"toAddress":"x","amount":1,"from":"y"}', '/from'],
  ])('answers 422 naming the field for %s', async (_name, body, pointer) => {
    const { token } = await caller();
    const problem = expectProblem(
      await call('POST', '/api/wallet/send', {
        token,
        body,
        headers: { 'content-type': 'application/json' },
      }),
      422,
    );
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer })]));
  });

  it('answers 422 to a transfer to yourself', async () => {
    const alice = await caller();
    expectProblem(await sendMoney(alice.token, { toAddress: alice.sub, amount: 1 }), 422);
  });

  it('answers 400 to malformed JSON and to a body that is not an object, 415 to another media type', async () => {
    const { token } = await caller();
    const json = { 'content-type': 'application/json' };
    expectProblem(
      await call('POST', '/api/wallet/send', { token, body: '{"toAddress":', headers: json }),
      400,
    );
    expectProblem(await call('POST', '/api/wallet/send', { token, body: '[]', headers: json }), 400);
    expectProblem(
      await call('POST', '/api/wallet/send', {
        token,
        body: 'toAddress=x&amount=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
  });

  it('answers 401 without a token, 403 without write:wallet', async () => {
    expectProblem(await call('POST', '/api/wallet/send', { json: { toAddress: 'x', amount: 1 } }), 401);
    const { token } = await caller('read:wallet');
    expectProblem(await sendMoney(token, { toAddress: 'x', amount: 1 }), 403);
  });

  it('replays the original transfer for a repeated Idempotency-Key and refuses it with another body', async () => {
    const alice = await caller();
    await fundViaCli(alice.sub, '10');
    const headers = { 'idempotency-key': `e2e-${alice.sub}` };
    const to = uniqueSub();
    const first = await sendMoney(alice.token, { toAddress: to, amount: 3 }, headers);
    const replay = await sendMoney(alice.token, { toAddress: to, amount: 3 }, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((replay.json as { transferId: string }).transferId).toBe(
      (first.json as { transferId: string }).transferId,
    );
    const reused = expectProblem(await sendMoney(alice.token, { toAddress: to, amount: 4 }, headers), 422);
    expect(reused.type).toMatch(/idempotency-key-reused$/);
    expect((await balance(alice.token)).json).toMatchObject({ balance: 7 });
  });
});
