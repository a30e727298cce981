import { describe, expect, it } from 'vitest';
import { CLOCK_TOLERANCE_SECONDS } from '#shared/auth/token-time.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { apiEvent, invoke } from '../support/events.ts';

/*
 * API Gateway reuses the authorizer's answer for a token for its cache TTL whatever the token's
 * `exp`; the functions refuse the request themselves once the `exp` the authorizer passed on has
 * gone by, with the authorizer's clock tolerance.
 */

let served = 0;
/** A route behind the authorizer, whose use case counts the requests that reach it. */
const balance = httpHandler({
  operationId: 'getBalance',
  run: async ({ principal }) => {
    served++;
    return { statusCode: 200, body: { address: principal.sub } };
  },
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

const request = (exp: number | string | null) =>
  invoke(balance, apiEvent({ scopes: ['read:wallet'], path: '/api/wallet/balance', exp: exp as number }));

describe('a function behind the authorizer', () => {
  it.each([
    ['past its exp beyond the clock tolerance', () => nowSeconds() - CLOCK_TOLERANCE_SECONDS - 1],
    ['an hour past its exp', () => nowSeconds() - 3600],
    ['of an authorizer answer without exp', () => null],
    ['whose exp is not a number', () => 'tomorrow'],
  ])('refuses a token %s with 401 invalid_token, before the use case runs', async (_label, exp) => {
    const before = served;
    const response = await request(exp());
    expect(response.statusCode).toBe(401);
    expect(response.contentType).toBe('application/problem+json');
    expect(response.headers?.['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(response.json).toMatchObject({
      status: 401,
      detail: expect.stringMatching(/expired|authenticated/),
    });
    expect(served).toBe(before);
  });

  it.each([
    ['expiring in an hour', () => nowSeconds() + 3600],
    ['past its exp within the clock tolerance', () => nowSeconds() - CLOCK_TOLERANCE_SECONDS + 2],
  ])('serves a token %s', async (_label, exp) => {
    expect((await request(exp())).statusCode).toBe(200);
  });
});
