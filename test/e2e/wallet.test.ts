import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { call, callWithLines, expectProblem, fundViaCli, openWallet, runFundCli, tokenFor } from './http.ts';

/**
 * The wallet through the local gateway: real tokens, real authorizer and handlers, DynamoDB Local;
 * one pass per route and status (the rules behind each: test/unit, test/integration).
 */

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
    expect((await balance(token)).json).toEqual({ address: sub, balance: 0, pending: 0, currency: 'USD' });
    const funded = await fundViaCli(sub, '25.50');
    expect(funded.balance).toBe(25.5);
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
    // Bob's first call opens his wallet.
    expect((await balance(bob.token)).json).toMatchObject({ balance: 0 });
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

  it('answers 422 naming the field, exactly as the JSON wrote it (every other rule: test/integration/wallet.test.ts)', async () => {
    const { token } = await caller();
    const problem = expectProblem(
      await call('POST', '/api/wallet/send', {
        token,
        body: '{"toAddress":"x","amount":0.30000000000000004}',
        headers: { 'content-type': 'application/json' },
      }),
      422,
    );
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/amount' })]));
  });

  it('answers 400 to malformed JSON, 415 to another media type', async () => {
    const { token } = await caller();
    const json = { 'content-type': 'application/json' };
    expectProblem(
      await call('POST', '/api/wallet/send', { token, body: '{"toAddress":', headers: json }),
      400,
    );
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
    await openWallet(to);
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

  it('answers 400 to two Idempotency-Key lines, in either order, or two keys in one line, moving nothing', async () => {
    const alice = await caller();
    await fundViaCli(alice.sub, '10');
    const to = uniqueSub();
    await openWallet(to);
    const shared = `shared-${alice.sub}`;
    const body = JSON.stringify({ toAddress: to, amount: 3 });
    expect(
      (await sendMoney(alice.token, { toAddress: to, amount: 3 }, { 'idempotency-key': shared })).status,
    ).toBe(200);
    const twoLines = (first: string, second: string) =>
      callWithLines(
        'POST',
        '/api/wallet/send',
        [
          ['Authorization', `Bearer ${alice.token}`],
          ['Content-Type', 'application/json'],
          ['Idempotency-Key', first],
          ['idempotency-key', second],
        ],
        body,
      );
    for (const [first, second] of [
      [shared, `new-${alice.sub}`],
      [`new-${alice.sub}`, shared],
    ] as const) {
      expect(expectProblem(await twoLines(first, second), 400).type).toMatch(/invalid-parameter$/);
    }
    const combined = await sendMoney(alice.token, JSON.parse(body), { 'idempotency-key': `${shared}, new` });
    expect(expectProblem(combined, 400).type).toMatch(/invalid-parameter$/);
    expect((await balance(alice.token)).json).toMatchObject({ balance: 7 });
  });
});

describe('addresses that look alike (issue 25)', () => {
  const lookalikes: readonly (readonly [string, (plain: string) => string])[] = [
    ['a Hangul filler after it', (plain) => `${plain}\u3164`],
    ['a variation selector after it', (plain) => `${plain}\uFE0F`],
    ['a no-break space after it', (plain) => `${plain}\u00A0`],
    ['a Cyrillic а in it', (plain) => plain.replace('a', '\u0430')],
    [
      'fullwidth letters',
      (plain) => plain.replace(/[a-z]/g, (c) => String.fromCodePoint((c.codePointAt(0) as number) + 0xfee0)),
    ],
  ];

  it.each(lookalikes)(
    'a send to an address with %s is refused with 422, moving nothing',
    async (_label, lookalikeOf) => {
      const alice = await caller();
      await fundViaCli(alice.sub, '10');
      const plain = uniqueSub('dave');
      await openWallet(plain);
      const refused = expectProblem(
        await sendMoney(alice.token, { toAddress: lookalikeOf(plain), amount: 1 }),
        422,
      );
      expect(refused.type).toMatch(/validation-failed$/);
      expect((await balance(alice.token)).json).toMatchObject({ balance: 10 });
    },
  );

  it.each(lookalikes)(
    'a token whose sub has %s is refused with 401 by the authorizer',
    async (_label, lookalikeOf) => {
      const token = await tokenFor('read:wallet', { sub: lookalikeOf(uniqueSub('dave')) });
      expectProblem(await balance(token), 401);
    },
  );

  it('a Cognito-style sub (a UUID) still opens and reads its wallet', async () => {
    const sub = crypto.randomUUID();
    const token = await tokenFor('read:wallet', { sub });
    expect((await balance(token)).json).toMatchObject({ address: sub, balance: 0 });
  });
});

describe('GET /api/wallet/transfers and GET /api/wallet/transfers/{transferId}', () => {
  it("list a caller's movements newest first, and show a transfer to its parties only", async () => {
    const alice = await caller();
    const bob = await caller();
    await fundViaCli(alice.sub, '10');
    await openWallet(bob.sub);
    const sent = await sendMoney(alice.token, { toAddress: bob.sub, amount: 2.5 });
    const { transferId } = sent.json as { transferId: string };

    const history = await call('GET', '/api/wallet/transfers?limit=1', { token: alice.token });
    expect(history.status).toBe(200);
    expect(history.json).toMatchObject({
      items: [{ transferId, direction: 'out', kind: 'transfer', amount: 2.5, balanceAfter: 7.5 }],
      nextCursor: expect.any(String),
    });
    const shown = await call('GET', `/api/wallet/transfers/${transferId}`, { token: bob.token });
    expect(shown.status).toBe(200);
    expect(shown.json).toMatchObject({ transferId, fromAddress: alice.sub, toAddress: bob.sub, amount: 2.5 });

    const stranger = await caller('read:wallet');
    expectProblem(await call('GET', `/api/wallet/transfers/${transferId}`, { token: stranger.token }), 404);
  });

  it('answer 400 to a cursor that is not one, 401 without a token and 403 without read:wallet', async () => {
    const { token } = await caller('read:wallet');
    expectProblem(await call('GET', '/api/wallet/transfers?cursor=not-a-cursor', { token }), 400);
    expectProblem(await call('GET', '/api/wallet/transfers'), 401);
    expectProblem(await call('GET', '/api/wallet/transfers/x'), 401);
    const { token: writeOnly } = await caller('write:wallet');
    expectProblem(await call('GET', '/api/wallet/transfers', { token: writeOnly }), 403);
    expectProblem(await call('GET', '/api/wallet/transfers/x', { token: writeOnly }), 403);
  });
});

describe('npm run wallet:fund', () => {
  it('refuses to open a lookalike of an address by funding it, exit code 2, writing nothing', async () => {
    const { sub, token } = await caller();
    // The address followed by a no-break space: what no token's sub and no toAddress may be.
    const run = await runFundCli(['--address', `${sub}\u00a0`, '--amount', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/not a valid wallet address/);
    expect((await balance(token)).json).toMatchObject({ balance: 0 });
  });

  it('funds once per --deposit-id: a re-run after success credits nothing more', async () => {
    const { sub, token } = await caller();
    const args = ['--address', sub, '--amount', '7.25', '--deposit-id', `dep-${sub}`];
    const first = await runFundCli(args);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ depositId: `dep-${sub}`, balance: 7.25 });
    const again = await runFundCli(args);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ alreadyRecorded: true, balance: 7.25 });
    expect((await balance(token)).json).toMatchObject({ balance: 7.25 });
  });

  it('prints a fresh deposit id before writing, for a safe re-run of a run that failed', async () => {
    const { sub } = await caller();
    const run = await runFundCli(['--address', sub, '--amount', '1']);
    expect(run.code).toBe(0);
    const { transferId } = JSON.parse(run.stdout) as { transferId: string };
    expect(run.stderr).toContain(`--deposit-id ${transferId}`);
  });

  it('prints one id for a deposit: the one its history line shows and its lookup finds', async () => {
    const { sub, token } = await caller();
    const run = await runFundCli(['--address', sub, '--amount', '3.10']);
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(printed)).not.toContain('depositId');

    const history = await call('GET', '/api/wallet/transfers', { token });
    expect(history.json).toMatchObject({ items: [{ transferId: printed.transferId, kind: 'deposit' }] });
    const lookup = await call('GET', `/api/wallet/transfers/${printed.transferId as string}`, { token });
    expect(lookup.status, lookup.text).toBe(200);
    expect(lookup.json).toMatchObject({ transferId: printed.transferId, kind: 'deposit', amount: 3.1 });
  });

  it('writes amounts as the API does: exact decimal JSON numbers', async () => {
    const { sub } = await caller();
    const run = await runFundCli(['--address', sub, '--amount', '12.30']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('"amount":12.30,"currency":"USD","balance":12.30');
  });

  it('gives an operator deposit id that is no UUID one transfer id, the same on a re-run', async () => {
    const { sub, token } = await caller();
    const args = ['--address', sub, '--amount', '2', '--deposit-id', `bank-ref-${sub}`];
    const first = JSON.parse((await runFundCli(args)).stdout) as { transferId: string };
    const again = JSON.parse((await runFundCli(args)).stdout) as { transferId: string };
    expect(again.transferId).toBe(first.transferId);
    const lookup = await call('GET', `/api/wallet/transfers/${first.transferId}`, { token });
    expect(lookup.status, lookup.text).toBe(200);
  });

  it('refuses a deposit id that is the id of another movement, exit code 3, writing nothing', async () => {
    const payer = await caller();
    const payee = await caller();
    await fundViaCli(payer.sub, '5');
    await fundViaCli(payee.sub, '1');
    const sent = await call('POST', '/api/wallet/send', {
      token: payer.token,
      json: { toAddress: payee.sub, amount: 1 },
    });
    expect(sent.status, sent.text).toBe(200);
    const { transferId } = sent.json as { transferId: string };
    const run = await runFundCli(['--address', payer.sub, '--amount', '1', '--deposit-id', transferId]);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/is the id of another movement/);
    expect((await balance(payer.token)).json).toMatchObject({ balance: 4 });
  });

  it('refuses a deposit id used for another deposit, exit code 3, writing nothing', async () => {
    const { sub, token } = await caller();
    const id = `dep-${sub}`;
    expect((await runFundCli(['--address', sub, '--amount', '1', '--deposit-id', id])).code).toBe(0);
    const other = await runFundCli(['--address', sub, '--amount', '2', '--deposit-id', id]);
    expect(other.code).toBe(3);
    expect(other.stderr).toMatch(/was used .* for another deposit/);
    expect((await balance(token)).json).toMatchObject({ balance: 1 });
  });

  it('refuses, before writing, an amount (exit code 2) or a balance (exit code 3) past the most a wallet holds, and reads the largest balance exactly', async () => {
    const { sub, token } = await caller();
    // No amount beyond the cap is valid: an invalid argument (exit code 2), checked before any write.
    const beyond2to53 = await runFundCli(['--address', sub, '--amount', '90071992547409.93']);
    expect(beyond2to53.code).toBe(2);
    expect(beyond2to53.stderr).toMatch(/too-large; at most 10000000000000\.00/);
    expect((await balance(token)).json).toMatchObject({ balance: 0 });
    const full = await runFundCli(['--address', sub, '--amount', '9999999999999.99']);
    expect(full.code).toBe(0);
    expect(full.stdout).toContain('"balance":9999999999999.99');
    const over = await runFundCli(['--address', sub, '--amount', '0.02']);
    expect(over.code).toBe(3);
    expect(over.stderr).toMatch(/refused, nothing was written: .* would exceed 10000000000000\.00 USD/);
    const read = await balance(token);
    expect(read.status).toBe(200);
    expect(read.text).toContain('"balance":9999999999999.99');
  });
});
