import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, NumberValue, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as getBalance } from '#functions/get-balance/handler.ts';
import { createSendMoneyHandler, handler as send } from '#functions/send-money/handler.ts';
import { MAX_BALANCE_MINOR } from '#shared/wallet/model/money.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { apiEvent, invoke, sendEvent, uniqueSub } from '../support/events.ts';
import { mentions, notGivenUp, proxiedClient, startFaultProxy } from '../support/faults.ts';
import { fund, open, walletLedger } from '../support/wallet.ts';

const { readWallet, recordDeposit } = walletLedger();

const documentClient = DynamoDBDocumentClient.from(
  new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT }),
);

const balanceOf = async (sub: string) => {
  const response = await invoke(
    getBalance,
    apiEvent({ sub, scopes: ['read:wallet'], path: '/api/wallet/balance' }),
  );
  expect(response.statusCode).toBe(200);
  return response;
};

const sendAs = (sub: string, body: unknown, headers: Record<string, string> | readonly string[] = {}) =>
  invoke(send, sendEvent(sub, body, headers));

// Concurrent sends go through the proxy in conflict mode: DynamoDB Local runs one transaction at
// a time and would hide the conflicts DynamoDB raises between them.
const conflicts = await startFaultProxy({ conflicts: true });
/** A send function in an execution environment of its own, against DynamoDB's conflicts. */
const contendedFunction = () =>
  createSendMoneyHandler({
    client: proxiedClient(conflicts),
    tableName: process.env.WALLETS_TABLE_NAME as string,
    settings: loadWalletSettings(),
  });
const contended = contendedFunction();
const sendContended = (sub: string, body: unknown, headers: Record<string, string> = {}) =>
  invoke(contended, sendEvent(sub, body, headers));

describe('wallet balance', () => {
  it('reads 0 in the deployment currency for a wallet that never received money', async () => {
    const sub = uniqueSub();
    const { json } = await balanceOf(sub);
    expect(json).toEqual({ address: sub, balance: 0, pending: 0, currency: 'USD' });
  });

  it('reads a balance beyond 2^53 minor units exactly (stored before the cap)', async () => {
    const sub = uniqueSub();
    await documentClient.send(
      new PutCommand({
        TableName: process.env.WALLETS_TABLE_NAME,
        Item: { pk: `WALLET#${sub}`, balance: new NumberValue('9007199254740993') },
      }),
    );
    const response = await balanceOf(sub);
    expect(response.body).toContain('"balance":90071992547409.93');
  });

  it('prints the balance as an exact decimal', async () => {
    const sub = uniqueSub();
    await fund(sub, 1230);
    const response = await balanceOf(sub);
    expect(response.body).toContain('"balance":12.30');
    expect(response.json.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('refuses a token without read:wallet', async () => {
    const response = await invoke(getBalance, apiEvent({ scopes: ['write:wallet'] }));
    expect(response.statusCode).toBe(403);
    expect(response.headers?.['www-authenticate']).toContain('insufficient_scope');
  });
});

describe('send money', () => {
  it('debits the sender, credits the recipient, and answers with the transfer', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 10_000);
    await open(bob);
    const response = await sendAs(alice, `{"toAddress":"${bob}","amount":12.34}`);
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({
      fromAddress: alice,
      toAddress: bob,
      amount: 12.34,
      currency: 'USD',
      status: 'completed',
    });
    expect(response.json).not.toHaveProperty('balance');
    expect(response.json.transferId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body).toContain('"amount":12.34');
    expect((await balanceOf(alice)).json.balance).toBe(87.66);
    expect((await balanceOf(bob)).json.balance).toBe(12.34);
  });

  it('reads the exact amount from a base64-encoded body too (an API with binary media types)', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 10_000);
    await open(bob);
    const event = apiEvent({
      method: 'POST',
      path: '/api/wallet/send',
      sub: alice,
      scopes: ['write:wallet'],
      rawBody: Buffer.from(`{"toAddress":"${bob}","amount":0.05}`).toString('base64'),
    });
    event.isBase64Encoded = true;
    const response = await invoke(send, event);
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('"amount":0.05');
    expect((await balanceOf(bob)).json.balance).toBe(0.05);
  });

  it('refuses an amount the balance does not cover with insufficient-funds, and changes nothing', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 500);
    await open(bob);
    const response = await sendAs(alice, { toAddress: bob, amount: 5.01 });
    expect(response.statusCode).toBe(422);
    expect(response.contentType).toBe('application/problem+json');
    expect(response.json.type).toMatch(/insufficient-funds$/);
    expect((await balanceOf(alice)).json.balance).toBe(5);
    expect((await balanceOf(bob)).json.balance).toBe(0);
  });

  it('refuses to send from a wallet that never received money, and opens it', async () => {
    const [carol, bob] = [uniqueSub('carol'), uniqueSub('bob')];
    await open(bob);
    const response = await sendAs(carol, { toAddress: bob, amount: 1 });
    expect(response.json.type).toMatch(/insufficient-funds$/);
    expect(await readWallet(carol)).toMatchObject({ balanceMinor: 0n });
  });

  it('says insufficient-funds, not whether the recipient exists, to a sender who cannot pay', async () => {
    const response = await sendAs(uniqueSub('carol'), { toAddress: uniqueSub('nobody'), amount: 1 });
    expect(response.json.type).toMatch(/insufficient-funds$/);
  });

  it('refuses a transfer to an address with no wallet with unknown-recipient, moving nothing', async () => {
    const [alice, typo] = [uniqueSub('alice'), uniqueSub('typo')];
    await fund(alice, 1_000);
    const response = await sendAs(alice, { toAddress: typo, amount: 1 });
    expect(response.statusCode).toBe(422);
    expect(response.contentType).toBe('application/problem+json');
    expect(response.json.type).toMatch(/unknown-recipient$/);
    expect(await readWallet(typo)).toBeUndefined();
    expect((await balanceOf(alice)).json.balance).toBe(10);
  });

  it("opens a wallet on its owner's first balance call: from then on it receives money", async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    expect((await sendAs(alice, { toAddress: bob, amount: 1 })).json.type).toMatch(/unknown-recipient$/);
    expect((await balanceOf(bob)).json.balance).toBe(0);
    expect((await sendAs(alice, { toAddress: bob, amount: 1 })).statusCode).toBe(200);
    expect((await balanceOf(bob)).json.balance).toBe(1);
  });

  it('refuses a credit that would take the recipient past the most a wallet holds, moving nothing', async () => {
    const [alice, rich] = [uniqueSub('alice'), uniqueSub('rich')];
    await Promise.all([fund(alice, 1_000), fund(rich, MAX_BALANCE_MINOR - 50)]);
    const response = await sendAs(alice, { toAddress: rich, amount: 1 });
    expect(response.statusCode).toBe(422);
    expect(response.json.type).toMatch(/recipient-balance-limit$/);
    expect((await balanceOf(alice)).json.balance).toBe(10);
    expect((await readWallet(rich))?.balanceMinor).toBe(BigInt(MAX_BALANCE_MINOR - 50));
    expect((await sendAs(alice, { toAddress: rich, amount: 0.5 })).statusCode).toBe(200);
    expect((await readWallet(rich))?.balanceMinor).toBe(BigInt(MAX_BALANCE_MINOR));
  });

  it('refuses an amount written in more characters than any amount needs, before parsing it', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    const response = await sendAs(alice, `{"toAddress":"${bob}","amount":1.${'0'.repeat(2_000_000)}}`);
    expect(response.statusCode).toBe(422);
    expect(response.json.errors).toEqual([
      { pointer: '/amount', detail: expect.stringMatching(/characters/) },
    ]);
    expect((await balanceOf(alice)).json.balance).toBe(10);
  });

  it.each([
    ['a string amount', '{"toAddress":"x","amount":"5"}', '/amount'],
    ['too many decimals', '{"toAddress":"x","amount":0.001}', '/amount'],
    ['a float artefact', '{"toAddress":"x","amount":0.30000000000000004}', '/amount'],
    ['a precision the float hides', '{"toAddress":"x","amount":0.10000000000000001}', '/amount'],
    ['negative zero', '{"toAddress":"x","amount":-0}', '/amount'],
    ['zero', '{"toAddress":"x","amount":0}', '/amount'],
    ['a negative amount', '{"toAddress":"x","amount":-1}', '/amount'],
    ['an overflowing number', '{"toAddress":"x","amount":1e400}', '/amount'],
    ['more than the per-transfer maximum', '{"toAddress":"x","amount":1000000.01}', '/amount'],
    ['an empty address', '{"toAddress":"","amount":1}', '/toAddress'],
    ['a control character in the address', '{"toAddress":"a\\u0007b","amount":1}', '/toAddress'],
    ['an address of 257 characters', `{"toAddress":"${'a'.repeat(257)}","amount":1}`, '/toAddress'],
    ['an unknown property', '{"toAddress":"x","amount":1,"memo":"hi"}', '/memo'],
    ['a missing amount', '{"toAddress":"x"}', '/amount'],
  ])('answers 422 naming the field for %s, moving nothing', async (_name, body, pointer) => {
    const alice = uniqueSub('alice');
    await fund(alice, 100);
    const response = await sendAs(alice, body);
    expect(response.statusCode).toBe(422);
    expect(response.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer })]));
    expect((await balanceOf(alice)).json.balance).toBe(1);
  });

  it('refuses a transfer to your own address', async () => {
    const alice = uniqueSub('alice');
    await fund(alice, 100);
    const response = await sendAs(alice, { toAddress: alice, amount: 1 });
    expect(response.statusCode).toBe(422);
    expect(response.json.errors).toEqual([{ pointer: '/toAddress', detail: 'must not be your own address' }]);
  });

  it.each([
    ['malformed JSON', '{"toAddress":', 400],
    ['a JSON array', '[1,2]', 400],
    ['a JSON string', '"send"', 400],
  ])('answers %s with %i', async (_name, body, status) => {
    expect((await sendAs(uniqueSub(), body)).statusCode).toBe(status);
  });

  it('answers 415 to a non-JSON content type', async () => {
    const response = await sendAs(uniqueSub(), '{"toAddress":"x","amount":1}', {
      'Content-Type': 'text/plain',
    });
    expect(response.statusCode).toBe(415);
  });

  it('takes the sender from the authorizer only: a fromAddress in the body is refused', async () => {
    const response = await sendAs(uniqueSub(), { toAddress: 'x', amount: 1, fromAddress: 'victim' });
    expect(response.statusCode).toBe(422);
  });
});

describe('Idempotency-Key', () => {
  it('replays the original transfer for the same key and body, moving money once', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    const headers = { 'Idempotency-Key': `key-${alice}` };
    const first = await sendAs(alice, { toAddress: bob, amount: 2.5 }, headers);
    const again = await sendAs(alice, `{"toAddress":"${bob}","amount":2.50}`, headers);
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.json.transferId).toBe(first.json.transferId);
    expect(again.json.createdAt).toBe(first.json.createdAt);
    expect(again.headers?.['idempotent-replayed']).toBe('true');
    expect((await balanceOf(alice)).json.balance).toBe(7.5);
    expect((await balanceOf(bob)).json.balance).toBe(2.5);
  });

  it('refuses the same key with a different body, moving nothing more', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    const headers = { 'Idempotency-Key': '"same"' };
    expect((await sendAs(alice, { toAddress: bob, amount: 1 }, headers)).statusCode).toBe(200);
    const other = await sendAs(alice, { toAddress: bob, amount: 2 }, headers);
    expect(other.statusCode).toBe(422);
    expect(other.json.type).toMatch(/idempotency-key-reused$/);
    expect((await balanceOf(alice)).json.balance).toBe(9);
  });

  it('keeps keys per caller: another caller may use the same key', async () => {
    const [alice, carol, bob] = [uniqueSub('alice'), uniqueSub('carol'), uniqueSub('bob')];
    await Promise.all([fund(alice, 1_000), fund(carol, 1_000), open(bob)]);
    const headers = { 'Idempotency-Key': 'shared-key' };
    const a = await sendAs(alice, { toAddress: bob, amount: 1 }, headers);
    const c = await sendAs(carol, { toAddress: bob, amount: 1 }, headers);
    expect(a.json.transferId).not.toBe(c.json.transferId);
    expect((await balanceOf(bob)).json.balance).toBe(2);
  });

  it('moves money once when the same request arrives many times at once', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 10_000);
    await open(bob);
    const headers = { 'Idempotency-Key': `concurrent-${alice}` };
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => sendContended(alice, { toAddress: bob, amount: 10 }, headers)),
    );
    const ok = responses.filter((r) => r.statusCode === 200);
    expect(ok.length).toBeGreaterThan(0);
    // Any request that did not get the transfer was told to retry; none moved money again.
    for (const r of responses) expect([200, 503]).toContain(r.statusCode);
    expect(new Set(ok.map((r) => r.json.transferId)).size).toBe(1);
    expect((await balanceOf(alice)).json.balance).toBe(90);
    // Credited directly, or in transit if the request that won the key was not the first to claim
    // bob's direct credit: once either way.
    const { balance, pending } = (await balanceOf(bob)).json;
    expect(Number(balance) + Number(pending)).toBe(10);
  });

  it.each([
    ['the shared key first', ['Idempotency-Key', 'K-shared', 'idempotency-key', 'K-new']],
    ['the shared key last', ['Idempotency-Key', 'K-new', 'idempotency-key', 'K-shared']],
    ['the same name twice', ['Idempotency-Key', 'K-new', 'Idempotency-Key', 'K-shared']],
    ['both keys in one line', ['Idempotency-Key', 'K-shared, K-new']],
  ])('answers 400 to two keys (%s), neither replaying nor moving money', async (_label, lines) => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    const first = await sendAs(alice, { toAddress: bob, amount: 1 }, { 'Idempotency-Key': 'K-shared' });
    expect(first.statusCode).toBe(200);
    const twice = await sendAs(alice, { toAddress: bob, amount: 1 }, lines);
    expect(twice.statusCode).toBe(400);
    expect(twice.contentType).toBe('application/problem+json');
    expect(twice.json.type).toMatch(/invalid-parameter$/);
    expect(twice.json.detail).toMatch(/Idempotency-Key/);
    expect((await balanceOf(alice)).json.balance).toBe(9);
  });

  it.each([['"a"b"'], ['"'], ['"a\\x"']])(
    'answers 400 to the malformed structured-field String %s',
    async (key) => {
      const response = await sendAs(uniqueSub(), { toAddress: 'x', amount: 1 }, { 'Idempotency-Key': key });
      expect(response.statusCode).toBe(400);
      expect(response.json.type).toMatch(/invalid-parameter$/);
    },
  );

  it('answers 400 to a malformed key', async () => {
    const response = await sendAs(uniqueSub(), { toAddress: 'x', amount: 1 }, { 'Idempotency-Key': 'a b' });
    expect(response.statusCode).toBe(400);
  });
});

describe('never overdrawn', () => {
  it('lets exactly one of 10 concurrent sends of 60 from a balance of 100 through', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 10_000);
    await open(bob);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => sendContended(alice, { toAddress: bob, amount: 60 })),
    );
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 422 || s === 503)).toBe(true);
    expect((await balanceOf(alice)).json.balance).toBe(40);
  });
});

describe('deposits (wallet:fund)', () => {
  const deposit = (address: string, amountMinor: number, depositId = `dep-${address}`) => ({
    depositId,
    address,
    amountMinor,
    currency: 'USD',
    createdAt: new Date().toISOString(),
  });

  it('credits once per deposit id: a repeat answers with the deposit recorded first', async () => {
    const sub = uniqueSub();
    const first = deposit(sub, 500);
    expect(await recordDeposit(first)).toEqual({ kind: 'recorded' });
    const again = await recordDeposit({ ...deposit(sub, 500), createdAt: '2030-01-01T00:00:00.000Z' });
    expect(again).toEqual({ kind: 'already-recorded', deposit: first });
    expect((await readWallet(sub))?.balanceMinor).toBe(500n);
  });

  it('refuses a deposit past the most a wallet holds, writing nothing', async () => {
    const sub = uniqueSub();
    await fund(sub, MAX_BALANCE_MINOR - 1);
    expect(await recordDeposit(deposit(sub, 2))).toEqual({ kind: 'balance-limit' });
    expect(await recordDeposit(deposit(sub, MAX_BALANCE_MINOR + 1, `dep-big-${sub}`))).toEqual({
      kind: 'balance-limit',
    });
    expect((await readWallet(sub))?.balanceMinor).toBe(BigInt(MAX_BALANCE_MINOR - 1));
    // The refused deposit id is still free: nothing was written under it.
    expect(await recordDeposit(deposit(sub, 1))).toEqual({ kind: 'recorded' });
  });

  it('npm run wallet:fund --table funds the table it names, at the endpoint it names', async () => {
    const sub = uniqueSub();
    // The table and the endpoint come from the arguments alone: the environment names others (a
    // closed port on loopback, should the command fall back on it), and no local stack.
    const { PORT: _port, LOCAL_STATE_DIR: _state, ...own } = process.env;
    const env = { ...own, DYNAMODB_ENDPOINT: 'http://127.0.0.1:9', WALLETS_TABLE_NAME: 'not-this-table' };
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        'scripts/wallet-fund.ts',
        '--table',
        process.env.WALLETS_TABLE_NAME as string,
        '--region',
        'us-east-1',
        '--endpoint',
        process.env.DYNAMODB_ENDPOINT as string,
        '--address',
        sub,
        '--amount',
        '12.34',
      ],
      { env },
    );
    expect(stdout).toContain(sub);
    expect((await readWallet(sub))?.balanceMinor).toBe(1234n);
  }, 60_000);
});

describe('a wallet many pay at once', () => {
  it('takes every payment of many payers paying one wallet at once, each in its own environment, without naming the wallet in a transaction that fails', async () => {
    const merchant = uniqueSub('merchant');
    const payers = Array.from({ length: 24 }, () => uniqueSub('payer'));
    await open(merchant);
    // One deposit after another: deposits at once would all wait on the one issuance account.
    for (const payer of payers) await fund(payer, 500);
    conflicts.resetTouches();
    const responses = await Promise.all(
      payers.map((payer) =>
        invoke(contendedFunction(), sendEvent(payer, { toAddress: merchant, amount: 5 }, {})),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(payers.map(() => 200));
    const touches = conflicts.touches(process.env.WALLETS_TABLE_NAME as string, { pk: `WALLET#${merchant}` });
    // The first payment's claim lets it credit the wallet; the others see it claimed.
    expect(touches).toEqual({ writes: expect.any(Number), failed: 0 });
    expect(touches.writes).toBeLessThanOrEqual(1);
    const { balanceMinor, pendingMinor } = (await readWallet(merchant)) ?? {};
    expect((balanceMinor ?? 0n) + (pendingMinor ?? 0n)).toBe(24n * 500n);
  });

  it("reads a hot wallet's item and marker once per environment while its mark holds, however many pay it there", async () => {
    const merchant = uniqueSub('merchant');
    const payers = Array.from({ length: 3 }, () => uniqueSub('payer'));
    await open(merchant);
    for (const payer of payers) await fund(payer, 500);
    await walletLedger().hotMarker.markHot(merchant, Date.now() + 60_000);
    const environment = contendedFunction();
    for (const payer of payers) {
      const response = await invoke(environment, sendEvent(payer, { toAddress: merchant, amount: 5 }, {}));
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body).status).toBe('pending');
    }
    const reads = (key: string) =>
      conflicts.requests('BatchGetItem', mentions(`"${key}"`)).filter(notGivenUp).length;
    expect([reads(`WALLET#${merchant}`), reads(`INBOUND#${merchant}`)]).toEqual([1, 1]);
    expect((await readWallet(merchant))?.pendingMinor).toBe(3n * 500n);
  });
});
