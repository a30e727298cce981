import { afterEach, describe, expect, it } from 'vitest';
import { PROVIDER_UNAVAILABLE } from '#functions/authorizer/authorizer.ts';
import { JWKS_FETCH_BACKOFF_MS } from '#functions/authorizer/jwks-cache.ts';
import { methodArnFor } from '#shared/auth/policy.ts';
import {
  authorizerOn,
  bearer,
  closeIdentityProviders,
  JWKS_DOWN,
  jwksOf,
  newSigningKey,
  startIdentityProvider,
} from '../support/identity-provider.ts';
import { linesWrittenBy, metricLines } from '../support/logs.ts';

/**
 * How long the authorizer trusts a key after the identity provider withdrew it (issue 42 item 4):
 * at most 10 minutes while the provider answers, at most 30 minutes while its refreshes fail, on
 * the cache's own clock (injected here: nothing sleeps). Before, a failed refresh kept the keys
 * held without limit.
 */

const MINUTE = 60_000;
/** A token the authorizer could not check, the provider failing: API Gateway's 503, not its 401. */
const UNAVAILABLE = new RegExp(`^${PROVIDER_UNAVAILABLE}$`);
const methodArn = methodArnFor({
  region: 'eu-west-1',
  accountId: '123456789012',
  apiId: 'a1b2c3d4e5',
  stage: 'prod',
  method: 'GET',
  path: '/api/v3/pet/1',
});

afterEach(closeIdentityProviders);

describe('a key the identity provider withdraws', () => {
  it('is refused at most 10 minutes after it leaves the JWKS, while the provider answers', async () => {
    const withdrawn = await newSigningKey('withdrawn');
    const next = await newSigningKey('next');
    const provider = await startIdentityProvider(jwksOf(withdrawn));
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, methodArn, clock);
    const token = await bearer(provider, withdrawn, { sub: 'leaving' });
    expect((await authorize(token)).principalId).toBe('leaving');

    // Withdrawn right after the fetch: trusted until the JWKS is 10 minutes old, not one moment more.
    provider.answer = jwksOf(next);
    clock.now += 10 * MINUTE - 1;
    expect((await authorize(token)).principalId).toBe('leaving');
    clock.now += 1;
    await expect(authorize(token)).rejects.toThrow(/^Unauthorized$/);
    expect((await authorize(await bearer(provider, next, { sub: 'staying' }))).principalId).toBe('staying');
  });

  it('is refused at most 30 minutes after its last confirmation while every refresh fails', async () => {
    const withdrawn = await newSigningKey('withdrawn-in-outage');
    const provider = await startIdentityProvider(jwksOf(withdrawn));
    const clock = { now: 1_000_000_000_000 };
    const confirmedAt = clock.now;
    const authorize = authorizerOn(provider, methodArn, clock);
    const token = await bearer(provider, withdrawn, { sub: 'outage' });
    expect((await authorize(token)).principalId).toBe('outage');

    // The provider withdraws the key and goes down: the cache cannot learn of it.
    provider.answer = JWKS_DOWN;
    // Held while refreshes fail, each failure counted, until 30 minutes after the last good fetch.
    for (const at of [10 * MINUTE, 20 * MINUTE, 30 * MINUTE - 10_000]) {
      clock.now = confirmedAt + at;
      const lines = await linesWrittenBy(async () => {
        expect((await authorize(token)).principalId).toBe('outage');
      });
      expect(metricLines(lines)).toEqual([expect.objectContaining({ JwksRefreshFailures: 1 })]);
    }
    const fetches = provider.fetches;
    // At the bound, with no refresh due yet (the last failed 10 s ago): refused without a fetch.
    clock.now = confirmedAt + 30 * MINUTE;
    const refused = await linesWrittenBy(async () => {
      await expect(authorize(token)).rejects.toThrow(UNAVAILABLE);
    });
    expect(metricLines(refused)).toEqual([expect.objectContaining({ AuthErrors: 1 })]);
    expect(provider.fetches).toBe(fetches);
    // Past it, a due refresh that fails is unavailable too.
    clock.now = confirmedAt + 31 * MINUTE;
    await expect(authorize(token)).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(fetches + 1);
  });

  it('is trusted again only when a fetched JWKS confirms it', async () => {
    const kept = await newSigningKey('kept');
    const dropped = await newSigningKey('dropped');
    const provider = await startIdentityProvider(jwksOf(kept, dropped));
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, methodArn, clock);
    const keptToken = await bearer(provider, kept, { sub: 'kept' });
    const droppedToken = await bearer(provider, dropped, { sub: 'dropped' });
    expect((await authorize(keptToken)).principalId).toBe('kept');

    provider.answer = JWKS_DOWN;
    clock.now += 45 * MINUTE;
    await expect(authorize(keptToken)).rejects.toThrow(UNAVAILABLE);

    // The provider is back, without one of the keys: the other is confirmed and trusted again.
    provider.answer = jwksOf(kept);
    clock.now += 31_000;
    expect((await authorize(keptToken)).principalId).toBe('kept');
    await expect(authorize(droppedToken)).rejects.toThrow(/^Unauthorized$/);
  });
});

describe('an identity provider that fails', () => {
  it('is asked at most once per back-off by a cold container, whatever the tokens', async () => {
    const key = await newSigningKey('known');
    const provider = await startIdentityProvider(jwksOf(key));
    provider.answer = JWKS_DOWN;
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, methodArn, clock);
    const strangers = await Promise.all(['s1', 's2', 's3'].map((kid) => newSigningKey(kid)));
    const tokens = [key, ...strangers, key].map((each, i) => bearer(provider, each, { sub: `caller-${i}` }));
    for (const token of tokens) await expect(authorize(await token)).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(1);

    // Back, but the back-off has a millisecond to run: still refused, without a fetch.
    provider.answer = jwksOf(key);
    clock.now += JWKS_FETCH_BACKOFF_MS - 1;
    await expect(authorize(await bearer(provider, key, { sub: 'early' }))).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(1);
    clock.now += 1;
    expect((await authorize(await bearer(provider, key, { sub: 'back' }))).principalId).toBe('back');
    expect(provider.fetches).toBe(2);
  });

  it('is asked at most once per back-off for unknown kids, while the keys held stay in use', async () => {
    const key = await newSigningKey('held');
    const provider = await startIdentityProvider(jwksOf(key));
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, methodArn, clock);
    expect((await authorize(await bearer(provider, key, { sub: 'first' }))).principalId).toBe('first');
    expect(provider.fetches).toBe(1);

    provider.answer = JWKS_DOWN;
    for (const kid of ['u1', 'u2', 'u3', 'u4']) {
      await expect(authorize(await bearer(provider, await newSigningKey(kid), { sub: kid }))).rejects.toThrow(
        UNAVAILABLE,
      );
      expect((await authorize(await bearer(provider, key, { sub: kid }))).principalId).toBe(kid);
    }
    expect(provider.fetches).toBe(2);
  });
});
