import { afterEach, describe, expect, it } from 'vitest';
import { PROVIDER_UNAVAILABLE } from '#functions/authorizer/authorizer.ts';
import { JWKS_FETCH_BACKOFF_MS } from '#functions/authorizer/jwks-cache.ts';
import { methodArnFor } from '#shared/auth/policy.ts';
import { AUTHORIZER_RETRY_AFTER_SECONDS } from '#shared/http/gateway-responses.ts';
import {
  authorizerOn,
  bearer,
  closeIdentityProviders,
  jwksOf,
  newSigningKey,
  startIdentityProvider,
} from '../support/identity-provider.ts';
import { linesWrittenBy, logLines, metricLines } from '../support/logs.ts';

/**
 * A token the authorizer cannot check because the identity provider fails is not a bad token: it
 * is rejected with an error other than `Unauthorized`, which API Gateway answers 503 with
 * Retry-After, where it was a 401 `invalid_token` that sent clients to sign in again at the
 * provider that was down. A bad token stays 401 whatever the provider does, so that no caller
 * turns one into a 503 while the provider answers.
 */

const methodArn = methodArnFor({
  region: 'eu-west-1',
  accountId: '123456789012',
  apiId: 'a1b2c3d4e5',
  stage: 'prod',
  method: 'GET',
  path: '/api/wallet/balance',
});
const UNAVAILABLE = new RegExp(`^${PROVIDER_UNAVAILABLE}$`);
const UNAUTHORIZED = /^Unauthorized$/;

afterEach(closeIdentityProviders);

describe('a well-signed token while the identity provider fails is rejected as unavailable, not Unauthorized', () => {
  it.each([
    ['answers 503', { status: 503, body: 'down' }, 'jwks-fetch'],
    ['answers 500', { status: 500, body: 'boom' }, 'jwks-fetch'],
    ['answers a page that is no JSON', { status: 200, body: '<html>maintenance</html>' }, 'jwks-invalid'],
    ['answers JSON that is no JWKS', { status: 200, body: '{"keys":"none"}' }, 'jwks-invalid'],
    [
      'answers a JWKS one of whose keys is no JWK',
      { status: 200, body: '{"keys":[{"kty":1}]}' },
      'jwks-invalid',
    ],
  ] as const)('the provider %s', async (_label, answer, reason) => {
    const provider = await startIdentityProvider(answer);
    const authorize = authorizerOn(provider, methodArn);
    const token = await bearer(provider, await newSigningKey('good'));
    const lines = await linesWrittenBy(async () => {
      await expect(authorize(token)).rejects.toThrow(UNAVAILABLE);
    });
    expect(logLines(lines)).toEqual([
      expect.objectContaining({ level: 'ERROR', outcome: 'verification-error', reason }),
    ]);
    expect(metricLines(lines)).toEqual([expect.objectContaining({ AuthErrors: 1 })]);
  });

  it('nothing listens at the JWKS URL (connection refused)', async () => {
    const provider = await startIdentityProvider({ status: 200, body: '{"keys":[]}' });
    await provider.close();
    await expect(
      authorizerOn(provider, methodArn)(await bearer(provider, await newSigningKey('good'))),
    ).rejects.toThrow(UNAVAILABLE);
  });

  it('the provider accepts the fetch and never answers: unavailable once the fetch times out', async () => {
    const provider = await startIdentityProvider('hang');
    const token = await bearer(provider, await newSigningKey('good'));
    await expect(authorizerOn(provider, methodArn)(token)).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(1);
  });

  it('tells callers to retry no sooner than the next fetch may start', () => {
    expect(AUTHORIZER_RETRY_AFTER_SECONDS * 1000).toBeGreaterThanOrEqual(JWKS_FETCH_BACKOFF_MS);
  });
});

describe('a bad token is Unauthorized whatever the identity provider does', () => {
  it('signed by another key under a kid of the JWKS, or expired, while the JWKS is healthy', async () => {
    const key = await newSigningKey('held');
    const provider = await startIdentityProvider(jwksOf(key));
    const authorize = authorizerOn(provider, methodArn);
    const impostor = { ...(await newSigningKey('held')), jwk: key.jwk };
    await expect(authorize(await bearer(provider, impostor))).rejects.toThrow(UNAUTHORIZED);
    await expect(authorize(await bearer(provider, key, { exp: 1 }))).rejects.toThrow(UNAUTHORIZED);
    expect((await authorize(await bearer(provider, key))).principalId).toBe('caller-1');
  });

  it('of an unknown kid while the JWKS is healthy, also while the next look for it must wait', async () => {
    const provider = await startIdentityProvider(jwksOf(await newSigningKey('published')));
    const authorize = authorizerOn(provider, methodArn);
    await expect(authorize(await bearer(provider, await newSigningKey('made-up-1')))).rejects.toThrow(
      UNAUTHORIZED,
    );
    const fetches = provider.fetches;
    // Refused without a fetch: a JWKS without the last unknown kid was read less than 10 s ago.
    await expect(authorize(await bearer(provider, await newSigningKey('made-up-2')))).rejects.toThrow(
      UNAUTHORIZED,
    );
    expect(provider.fetches).toBe(fetches);
  });

  it('naming a key the JWKS publishes but no token can be checked with', async () => {
    // Any caller can name these while the provider answers: the token's way in, not an outage.
    const symmetric = { kty: 'oct', kid: 'shared-secret', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0' };
    const published = await newSigningKey('published');
    const withoutY = { ...published.jwk, kid: 'no-y', y: undefined };
    const provider = await startIdentityProvider(jwksOf(published, symmetric, withoutY));
    const authorize = authorizerOn(provider, methodArn);
    for (const kid of ['shared-secret', 'no-y']) {
      await expect(authorize(await bearer(provider, await newSigningKey(kid)))).rejects.toThrow(UNAUTHORIZED);
    }
  });

  it('malformed, while the provider is down: refused before any key is looked up', async () => {
    const provider = await startIdentityProvider({ status: 503, body: 'down' });
    const authorize = authorizerOn(provider, methodArn);
    for (const authorization of ['Bearer a.b.c', 'Bearer not-a-jwt', 'Basic dXNlcjpwYXNzd29yZA==']) {
      await expect(authorize(authorization)).rejects.toThrow(UNAUTHORIZED);
    }
    expect(provider.fetches).toBe(0);
  });

  it('checked against the keys held while the provider is down; an unknown kid then is unavailable', async () => {
    const key = await newSigningKey('held');
    const provider = await startIdentityProvider(jwksOf(key));
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, methodArn, clock);
    expect((await authorize(await bearer(provider, key))).principalId).toBe('caller-1');

    provider.answer = { status: 503, body: 'down' };
    const impostor = { ...(await newSigningKey('held')), jwk: key.jwk };
    await expect(authorize(await bearer(provider, impostor))).rejects.toThrow(UNAUTHORIZED);
    await expect(authorize(await bearer(provider, key, { aud: 'another-api' }))).rejects.toThrow(
      UNAUTHORIZED,
    );
    expect(provider.fetches).toBe(1);

    // A kid rotated in while the provider is down looks like a made-up one: neither is known to be
    // bad, and the provider, asked, fails. Through the back-off after that failure too.
    const rotated = await newSigningKey('rotated-in');
    await expect(authorize(await bearer(provider, rotated))).rejects.toThrow(UNAVAILABLE);
    clock.now += JWKS_FETCH_BACKOFF_MS - 1;
    await expect(authorize(await bearer(provider, await newSigningKey('made-up')))).rejects.toThrow(
      UNAVAILABLE,
    );
    expect(provider.fetches).toBe(2);
    expect((await authorize(await bearer(provider, key))).principalId).toBe('caller-1');

    // Back, with the rotated key: found.
    provider.answer = jwksOf(key, rotated);
    clock.now += 1;
    expect((await authorize(await bearer(provider, rotated))).principalId).toBe('caller-1');
  });
});
