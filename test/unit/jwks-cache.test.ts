import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccessTokenVerifier } from '#functions/authorizer/access-token.ts';
import { createAuthorizer, PROVIDER_UNAVAILABLE } from '#functions/authorizer/authorizer.ts';
import { createJwksCache, JWKS_FETCH_BACKOFF_MS } from '#functions/authorizer/jwks-cache.ts';
import { loadAuthorizerSettings } from '#functions/authorizer/settings.ts';
import { authorizerEnvironment } from '#infra/environment.ts';
import { JWKS_PATH, LOCAL_AUDIENCE, localIssuerUrl } from '#infra/local/issuer.ts';
import { methodArnFor } from '#shared/auth/policy.ts';
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

interface Key {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** An identity provider on loopback whose JWKS (or failure) a test sets, counting fetches. */
interface Provider {
  answer: { status: number; keys: readonly Key[] };
  fetches: number;
  readonly issuer: string;
  readonly jwksUrl: string;
  close(): void;
}

const providers: Provider[] = [];
afterEach(() => {
  for (const provider of providers.splice(0)) provider.close();
});

async function startProvider(keys: readonly Key[]): Promise<Provider> {
  const server: Server = createServer((request, response) => {
    if (request.url !== JWKS_PATH) return void response.writeHead(404).end();
    provider.fetches++;
    const { status, keys: published } = provider.answer;
    response
      .writeHead(status, { 'content-type': 'application/json' })
      .end(status === 200 ? JSON.stringify({ keys: published.map((key) => key.jwk) }) : 'down');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const issuer = localIssuerUrl(address.port);
  const provider: Provider = {
    answer: { status: 200, keys },
    fetches: 0,
    issuer,
    jwksUrl: `${issuer}${JWKS_PATH}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
  providers.push(provider);
  return provider;
}

/** An authorizer as a cold start builds it, its JWKS cache on `clock`. */
function authorizerOn(provider: Provider, clock: { now: number }) {
  const env = authorizerEnvironment({
    issuer: provider.issuer,
    audience: LOCAL_AUDIENCE,
    jwksUrl: provider.jwksUrl,
  });
  const verify = createAccessTokenVerifier(
    loadAuthorizerSettings(env),
    createJwksCache({ now: () => clock.now }),
  );
  const authorizer = createAuthorizer({ verify });
  return (token: string): Promise<APIGatewayAuthorizerResult> =>
    authorizer({ type: 'TOKEN', methodArn, authorizationToken: `Bearer ${token}` });
}

async function tokenOf(provider: Provider, key: Key, sub: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: provider.issuer, aud: LOCAL_AUDIENCE, sub, iat: now, exp: now + 3600 })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
}

describe('a key the identity provider withdraws', () => {
  it('is refused at most 10 minutes after it leaves the JWKS, while the provider answers', async () => {
    const withdrawn = await newKey('withdrawn');
    const next = await newKey('next');
    const provider = await startProvider([withdrawn]);
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, clock);
    const token = await tokenOf(provider, withdrawn, 'leaving');
    expect((await authorize(token)).principalId).toBe('leaving');

    // Withdrawn right after the fetch: trusted until the JWKS is 10 minutes old, not one moment more.
    provider.answer = { status: 200, keys: [next] };
    clock.now += 10 * MINUTE - 1;
    expect((await authorize(token)).principalId).toBe('leaving');
    clock.now += 1;
    await expect(authorize(token)).rejects.toThrow(/^Unauthorized$/);
    expect((await authorize(await tokenOf(provider, next, 'staying'))).principalId).toBe('staying');
  });

  it('is refused at most 30 minutes after its last confirmation while every refresh fails', async () => {
    const withdrawn = await newKey('withdrawn-in-outage');
    const provider = await startProvider([withdrawn]);
    const clock = { now: 1_000_000_000_000 };
    const confirmedAt = clock.now;
    const authorize = authorizerOn(provider, clock);
    const token = await tokenOf(provider, withdrawn, 'outage');
    expect((await authorize(token)).principalId).toBe('outage');

    // The provider withdraws the key and goes down: the cache cannot learn of it.
    provider.answer = { status: 503, keys: [] };
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
    const kept = await newKey('kept');
    const dropped = await newKey('dropped');
    const provider = await startProvider([kept, dropped]);
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, clock);
    const keptToken = await tokenOf(provider, kept, 'kept');
    const droppedToken = await tokenOf(provider, dropped, 'dropped');
    expect((await authorize(keptToken)).principalId).toBe('kept');

    provider.answer = { status: 503, keys: [] };
    clock.now += 45 * MINUTE;
    await expect(authorize(keptToken)).rejects.toThrow(UNAVAILABLE);

    // The provider is back, without one of the keys: the other is confirmed and trusted again.
    provider.answer = { status: 200, keys: [kept] };
    clock.now += 31_000;
    expect((await authorize(keptToken)).principalId).toBe('kept');
    await expect(authorize(droppedToken)).rejects.toThrow(/^Unauthorized$/);
  });
});

describe('an identity provider that fails', () => {
  it('is asked at most once per back-off by a cold container, whatever the tokens', async () => {
    const key = await newKey('known');
    const provider = await startProvider([key]);
    provider.answer = { status: 503, keys: [] };
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, clock);
    const strangers = await Promise.all(['s1', 's2', 's3'].map(newKey));
    const tokens = [key, ...strangers, key].map((each, i) => tokenOf(provider, each, `caller-${i}`));
    for (const token of tokens) await expect(authorize(await token)).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(1);

    // Back, but the back-off has a millisecond to run: still refused, without a fetch.
    provider.answer = { status: 200, keys: [key] };
    clock.now += JWKS_FETCH_BACKOFF_MS - 1;
    await expect(authorize(await tokenOf(provider, key, 'early'))).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(1);
    clock.now += 1;
    expect((await authorize(await tokenOf(provider, key, 'back'))).principalId).toBe('back');
    expect(provider.fetches).toBe(2);
  });

  it('is asked at most once per back-off for unknown kids, while the keys held stay in use', async () => {
    const key = await newKey('held');
    const provider = await startProvider([key]);
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, clock);
    expect((await authorize(await tokenOf(provider, key, 'first'))).principalId).toBe('first');
    expect(provider.fetches).toBe(1);

    provider.answer = { status: 503, keys: [] };
    for (const kid of ['u1', 'u2', 'u3', 'u4']) {
      await expect(authorize(await tokenOf(provider, await newKey(kid), kid))).rejects.toThrow(UNAVAILABLE);
      expect((await authorize(await tokenOf(provider, key, kid))).principalId).toBe(kid);
    }
    expect(provider.fetches).toBe(2);
  });
});
