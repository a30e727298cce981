import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { call, gateway, openWallet, tokenFor, uniquePetId } from './http.ts';

/**
 * Two Authorization lines (issue 45 item 3): the local gateway let the first win where API Gateway
 * hands its functions the last in `headers`, so which caller a request was depended on where it
 * ran. Every function of a protected route now sees every line (`multiValueHeaders`) and refuses
 * the repetition (docs/decisions/repeated-headers.md).
 */

interface RawAnswer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly json: Record<string, unknown> | undefined;
}

/** A GET with header lines exactly as given (fetch would join two lines into one). */
function getWithLines(path: string, lines: readonly [string, string][]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port: gateway.port,
        method: 'GET',
        path,
        // An array of lines: Node adds no Host of its own then, and joins nothing.
        headers: ['Host', `127.0.0.1:${gateway.port}`, ...lines.flat()],
      },
      async (response) => {
        let text = '';
        for await (const chunk of response) text += (chunk as Buffer).toString();
        const contentType = response.headers['content-type'];
        resolve({
          status: response.statusCode ?? 0,
          contentType,
          json: contentType?.includes('json') && text !== '' ? JSON.parse(text) : undefined,
        });
      },
    );
    request.on('error', reject);
    request.end();
  });
}

function expectInvalidParameter(answer: RawAnswer): void {
  expect(answer.status).toBe(400);
  expect(answer.contentType).toBe('application/problem+json');
  expect(answer.json).toMatchObject({
    type: expect.stringMatching(/:invalid-parameter$/),
    status: 400,
    detail: expect.stringMatching(/Authorization/),
  });
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
      const answer = await getWithLines('/api/wallet/balance', [
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
        await getWithLines(`/api/v3/pet/${uniquePetId()}`, [
          ['Authorization', junk],
          ['Authorization', `Bearer ${token}`],
        ]),
      );
    }
  });

  it('answers 401 when the line the gateway authorizes (the last) is not a token', async () => {
    const token = await tokenFor('read:pets');
    const answer = await getWithLines(`/api/v3/pet/${uniquePetId()}`, [
      ['Authorization', `Bearer ${token}`],
      ['Authorization', 'Bearer junk'],
    ]);
    expect(answer.status).toBe(401);
    expect(answer.contentType).toBe('application/problem+json');
  });
});
