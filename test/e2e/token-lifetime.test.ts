import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { CLOCK_TOLERANCE_SECONDS } from '#shared/auth/token-time.ts';
import { call, expectProblem, tokenFor } from './http.ts';

/**
 * Tokens through the local gateway, whose authorizer cache mirrors API Gateway's: an answer is
 * reused for the cache TTL (300 s) per token, whatever the token's `exp`.
 */

const balance = (token: string) => call('GET', '/api/wallet/balance', { token });

describe('a token through the gateway', () => {
  it('is refused with 401 invalid_token once expired, although its authorizer answer is still cached', async () => {
    // Expiring in 10 s, inside the clock tolerance for 5 s more: the authorizer accepts it once,
    // and the gateway caches that answer for far longer than the token's life. (Expiring at once, it
    // gave the first call 4 to 5 s, and a second before, 3 s, which a gateway busy with other tests'
    // load can take: helpers 38 and 52.)
    const token = await tokenFor('read:wallet', { ttlSeconds: 10 });
    const { exp } = decodeJwt(token);
    expect((await balance(token)).status).toBe(200);

    await sleep(Math.max(0, ((exp as number) + CLOCK_TOLERANCE_SECONDS) * 1000 + 100 - Date.now()));
    const refused = await balance(token);
    expectProblem(refused, 401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');

    // Only the expired token: a current one of the same caller is served.
    const sub = decodeJwt(token).sub;
    expect((await balance(await tokenFor('read:wallet', { sub: sub as string }))).status).toBe(200);
  }, 60_000);
});
