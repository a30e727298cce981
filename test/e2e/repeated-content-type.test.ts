import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import {
  type CallResult,
  call,
  callWithLines,
  expectProblem,
  fundViaCli,
  openWallet,
  tokenFor,
  uniquePetId,
} from './http.ts';

/**
 * Two Content-Type lines: API Gateway hands a function the last in `headers`, so a JSON body
 * labelled `application/json` and then `application/x-www-form-urlencoded` was read as a form, and
 * a proxy that kept the first line would have read it as JSON. Content-Type is a singleton field
 * (RFC 9110 §8.3); a function that takes a body refuses two lines, whatever they say
 * (docs/decisions/repeated-headers.md).
 */

const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';

const twoLines = (first: string, second: string): [string, string][] => [
  ['Content-Type', first],
  ['content-type', second],
];

function expectRepeatedContentType(answer: CallResult): void {
  const problem = expectProblem(answer, 400);
  expect(problem.type).toMatch(/:invalid-parameter$/);
  expect(problem.detail).toMatch(/Content-Type/);
}

describe('two Content-Type lines', () => {
  it('on a send: 400, in either order and when both agree, moving nothing', async () => {
    const sub = uniqueSub('two-types');
    const token = await tokenFor('read:wallet write:wallet', { sub });
    await fundViaCli(sub, '10');
    const to = uniqueSub('two-types-to');
    await openWallet(to);
    const body = JSON.stringify({ toAddress: to, amount: 3 });
    for (const [first, second] of [
      [JSON_TYPE, 'text/plain'],
      ['text/plain', JSON_TYPE],
      [JSON_TYPE, JSON_TYPE],
    ] as const) {
      const answer = await callWithLines(
        'POST',
        '/api/wallet/send',
        [['Authorization', `Bearer ${token}`], ...twoLines(first, second)],
        body,
      );
      expectRepeatedContentType(answer);
    }
    expect((await call('GET', '/api/wallet/balance', { token })).json).toMatchObject({ balance: 10 });
  });

  it('on a form update: 400, whichever line names the form, the pet unchanged', async () => {
    const token = await tokenFor('read:pets write:pets');
    const id = uniquePetId();
    const pet = { id, name: 'rex', photoUrls: [], status: 'available' };
    expect((await call('POST', '/api/v3/pet', { token, json: pet })).status).toBe(200);
    for (const [first, second, body] of [
      [JSON_TYPE, FORM_TYPE, 'name=max&status=sold'],
      [FORM_TYPE, JSON_TYPE, 'name=max&status=sold'],
      [FORM_TYPE, JSON_TYPE, JSON.stringify({ name: 'max', status: 'sold' })],
    ] as const) {
      const answer = await callWithLines(
        'POST',
        `/api/v3/pet/${id}`,
        [['Authorization', `Bearer ${token}`], ...twoLines(first, second)],
        body,
      );
      expectRepeatedContentType(answer);
    }
    expect((await call('GET', `/api/v3/pet/${id}`, { token })).json).toEqual(pet);
  });

  it('on a pet add: 400, no pet stored', async () => {
    const token = await tokenFor('read:pets write:pets');
    const id = uniquePetId();
    const answer = await callWithLines(
      'POST',
      '/api/v3/pet',
      [['Authorization', `Bearer ${token}`], ...twoLines(JSON_TYPE, JSON_TYPE)],
      JSON.stringify({ id, name: 'rex', photoUrls: [] }),
    );
    expectRepeatedContentType(answer);
    expectProblem(await call('GET', `/api/v3/pet/${id}`, { token }), 404);
  });

  it('one line still works, in any case of its name', async () => {
    const token = await tokenFor('read:pets write:pets');
    const id = uniquePetId();
    const answer = await callWithLines(
      'POST',
      '/api/v3/pet',
      [
        ['Authorization', `Bearer ${token}`],
        ['CONTENT-TYPE', JSON_TYPE],
      ],
      JSON.stringify({ id, name: 'rex', photoUrls: [] }),
    );
    expect(answer.status, answer.text).toBe(200);
  });
});
