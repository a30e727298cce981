import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import {
  type CallResult,
  call,
  callWithLines,
  expectProblem,
  openWallet,
  tokenFor,
  uniquePetId,
} from './http.ts';

/**
 * Two Authorization lines (issue 45 item 3): the local gateway let the first win where API Gateway
 * hands its functions the last in `headers`, so which caller a request was depended on where it
 * ran. Every function of a protected route now sees every line (`multiValueHeaders`) and refuses
 * the repetition (docs/decisions/repeated-headers.md).
 */

function expectInvalidParameter(answer: CallResult): void {
  const problem = expectProblem(answer, 400);
  expect(problem.type).toMatch(/:invalid-parameter$/);
  expect(problem.detail).toMatch(/Authorization/);
}

describe('two Authorization lines', () => {
  it("answers 400, not the balance of either caller's wallet", async () => {
    const a = uniqueSub('two-lines-a');
    const b = uniqueSub('two-lines-b');
    await openWallet(a);
    await openWallet(b);
    const tokenA = await tokenFor('read:wallet', { sub: a });
    const tokenB = await tokenFor('read:wallet', { sub: b });
    for (const [first, second] of [
      [tokenA, tokenB],
      [tokenB, tokenA],
      [tokenA, tokenA],
    ] as const) {
      const answer = await callWithLines('GET', '/api/wallet/balance', [
        ['Authorization', `Bearer ${first}`],
        ['authorization', `Bearer ${second}`],
      ]);
      expectInvalidParameter(answer);
      expect(answer.json).not.toHaveProperty('balance');
    }
    // One line still works, for both callers.
    expect((await call('GET', '/api/wallet/balance', { token: tokenA })).status).toBe(200);
    expect((await call('GET', '/api/wallet/balance', { token: tokenB })).status).toBe(200);
  });

  it('answers 400 when the line the gateway authorizes is good, whatever the other holds', async () => {
    const token = await tokenFor('read:pets');
    for (const junk of ['Bearer junk', 'Basic dXNlcjpwYXNz', '']) {
      expectInvalidParameter(
        await callWithLines('GET', `/api/v3/pet/${uniquePetId()}`, [
          ['Authorization', junk],
          ['Authorization', `Bearer ${token}`],
        ]),
      );
    }
  });

  it('answers 401 when the line the gateway authorizes (the last) is not a token', async () => {
    const token = await tokenFor('read:pets');
    const answer = await callWithLines('GET', `/api/v3/pet/${uniquePetId()}`, [
      ['Authorization', `Bearer ${token}`],
      ['Authorization', 'Bearer junk'],
    ]);
    expectProblem(answer, 401);
  });
});
