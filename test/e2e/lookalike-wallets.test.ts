import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, expectProblem, fundViaCli, runFundCli, tokenFor } from './http.ts';

/*
 * Issue 45.4: an address written wholly in Cyrillic passes the address profile (one script), so
 * beside the wallet `pace7…` a second wallet `расе7…` (U+0440 U+0430 U+0441 U+0435) could be opened
 * and paid by whoever copied what looked like the first. Opening a wallet now claims its UTS #39
 * skeleton: the lookalike gets no wallet, and a payment to it is refused as one to an unknown address.
 */

/** The same digits after both: digits are in every script, and keep the test's addresses its own. */
const pair = () => {
  const digits = `7${randomInt(10 ** 9, 10 ** 10)}`;
  return { latin: `pace${digits}`, cyrillic: `\u0440\u0430\u0441\u0435${digits}` };
};

const balance = (sub: string) =>
  tokenFor('read:wallet', { sub }).then((token) => call('GET', '/api/wallet/balance', { token }));

const send = async (from: string, toAddress: string) =>
  call('POST', '/api/wallet/send', {
    token: await tokenFor('read:wallet write:wallet', { sub: from }),
    json: { toAddress, amount: 1 },
    headers: { 'idempotency-key': randomUUID() },
  });

describe('no two wallets look alike', () => {
  it('refuses to open расе7… beside pace7…: its balance is a 409 problem, and a payment to it a 422 unknown-recipient', async () => {
    const { latin, cyrillic } = pair();
    expect((await balance(latin)).status).toBe(200);

    const refused = expectProblem(await balance(cyrillic), 409);
    expect(refused.type).toMatch(/lookalike-address$/);

    const payer = `payer-${randomUUID()}`;
    await fundViaCli(payer, '5');
    const toLookalike = expectProblem(await send(payer, cyrillic), 422);
    expect(toLookalike.type).toMatch(/unknown-recipient$/);
    // Nothing moved; the address that was opened first is paid as ever.
    expect((await send(payer, latin)).status).toBe(200);
    expect((await balance(payer)).json).toMatchObject({ balance: 4 });
    expect((await balance(latin)).json).toMatchObject({ balance: 1, pending: 0 });
  }, 60_000);

  it('has wallet:fund refuse to open a lookalike, exit code 3, naming the wallet it looks like', async () => {
    const { latin, cyrillic } = pair();
    await fundViaCli(latin, '1');
    const run = await runFundCli(['--address', cyrillic, '--amount', '1']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`looks like the address of the wallet ${JSON.stringify(latin)}`);
    // Still no wallet there: its owner's first call is refused, as it would have been.
    expectProblem(await balance(cyrillic), 409);
  }, 60_000);

  it('opens the one that came first, whichever script it is in', async () => {
    const { latin, cyrillic } = pair();
    expect((await balance(cyrillic)).status).toBe(200);
    expectProblem(await balance(latin), 409);
  });
});
