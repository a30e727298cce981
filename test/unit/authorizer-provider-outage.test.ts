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
import { AUTHORIZER_RETRY_AFTER_SECONDS } from '#shared/http/gateway-responses.ts';
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

interface Key {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** What the provider answers a fetch of its JWKS with; `hang` answers nothing, ever. */
type Answer = { readonly status: number; readonly body: string } | 'hang';

/** An identity provider on loopback whose answer a test sets, counting fetches. */
interface Provider {
  answer: Answer;
  fetches: number;
  readonly issuer: string;
  readonly jwksUrl: string;
  close(): Promise<void>;
}

const providers: Provider[] = [];
afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.close();
});

const jwksOf = (...keys: readonly (Key | JWK)[]): Answer => ({
  status: 200,
  body: JSON.stringify({ keys: keys.map((key) => ('jwk' in key ? key.jwk : key)) }),
});

async function startProvider(answer: Answer): Promise<Provider> {
  const server: Server = createServer((request, response) => {
    if (request.url !== JWKS_PATH) return void response.writeHead(404).end();
    provider.fetches++;
    if (provider.answer === 'hang') return;
    const { status, body } = provider.answer;
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const issuer = localIssuerUrl(address.port);
  const provider: Provider = {
    answer,
    fetches: 0,
    issuer,
    jwksUrl: `${issuer}${JWKS_PATH}`,
    close: async () => {
      server.closeAllConnections();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
  providers.push(provider);
  return provider;
}

/** An authorizer as a cold start builds it, its JWKS cache on `clock` (the real one by default). */
function authorizerOn(provider: Provider, clock?: { now: number }) {
  const env = authorizerEnvironment({
    issuer: provider.issuer,
    audience: LOCAL_AUDIENCE,
    jwksUrl: provider.jwksUrl,
  });
  const cache = createJwksCache(clock === undefined ? {} : { now: () => clock.now });
  const authorizer = createAuthorizer({
    verify: createAccessTokenVerifier(loadAuthorizerSettings(env), cache),
  });
  return (authorization: string): Promise<APIGatewayAuthorizerResult> =>
    authorizer({ type: 'TOKEN', methodArn, authorizationToken: authorization });
}

/** A well-signed, current access token of `provider`, with `claims` over the good ones. */
async function bearer(provider: Provider, key: Key, claims: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    iss: provider.issuer,
    aud: LOCAL_AUDIENCE,
    sub: 'caller-1',
    iat: now,
    exp: now + 300,
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
  return `Bearer ${token}`;
}

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
    const provider = await startProvider(answer);
    const authorize = authorizerOn(provider);
    const token = await bearer(provider, await newKey('good'));
    const lines = await linesWrittenBy(async () => {
      await expect(authorize(token)).rejects.toThrow(UNAVAILABLE);
    });
    expect(logLines(lines)).toEqual([
      expect.objectContaining({ level: 'ERROR', outcome: 'verification-error', reason }),
    ]);
    expect(metricLines(lines)).toEqual([expect.objectContaining({ AuthErrors: 1 })]);
  });

  it('nothing listens at the JWKS URL (connection refused)', async () => {
    const provider = await startProvider({ status: 200, body: '{"keys":[]}' });
    await provider.close();
    await expect(authorizerOn(provider)(await bearer(provider, await newKey('good')))).rejects.toThrow(
      UNAVAILABLE,
    );
  });

  it('the provider accepts the fetch and never answers: unavailable once the fetch times out', async () => {
    const provider = await startProvider('hang');
    const token = await bearer(provider, await newKey('good'));
    await expect(authorizerOn(provider)(token)).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(1);
  });

  it('tells callers to retry no sooner than the next fetch may start', () => {
    expect(AUTHORIZER_RETRY_AFTER_SECONDS * 1000).toBeGreaterThanOrEqual(JWKS_FETCH_BACKOFF_MS);
  });
});

describe('a bad token is Unauthorized whatever the identity provider does', () => {
  it('signed by another key under a kid of the JWKS, or expired, while the JWKS is healthy', async () => {
    const key = await newKey('held');
    const provider = await startProvider(jwksOf(key));
    const authorize = authorizerOn(provider);
    const impostor = { ...(await newKey('held')), jwk: key.jwk };
    await expect(authorize(await bearer(provider, impostor))).rejects.toThrow(UNAUTHORIZED);
    await expect(authorize(await bearer(provider, key, { exp: 1 }))).rejects.toThrow(UNAUTHORIZED);
    expect((await authorize(await bearer(provider, key))).principalId).toBe('caller-1');
  });

  it('of an unknown kid while the JWKS is healthy, also while the next look for it must wait', async () => {
    const provider = await startProvider(jwksOf(await newKey('published')));
    const authorize = authorizerOn(provider);
    await expect(authorize(await bearer(provider, await newKey('made-up-1')))).rejects.toThrow(UNAUTHORIZED);
    const fetches = provider.fetches;
    // Refused without a fetch: a JWKS without the last unknown kid was read less than 10 s ago.
    await expect(authorize(await bearer(provider, await newKey('made-up-2')))).rejects.toThrow(UNAUTHORIZED);
    expect(provider.fetches).toBe(fetches);
  });

  it('naming a key the JWKS publishes but no token can be checked with', async () => {
    // Any caller can name these while the provider answers: the token's way in, not an outage.
    const symmetric = { kty: 'oct', kid: 'shared-secret', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0' };
    const published = await newKey('published');
    const withoutY = { ...published.jwk, kid: 'no-y', y: undefined };
    const provider = await startProvider(jwksOf(published, symmetric, withoutY));
    const authorize = authorizerOn(provider);
    for (const kid of ['shared-secret', 'no-y']) {
      await expect(authorize(await bearer(provider, await newKey(kid)))).rejects.toThrow(UNAUTHORIZED);
    }
  });

  it('malformed, while the provider is down: refused before any key is looked up', async () => {
    const provider = await startProvider({ status: 503, body: 'down' });
    const authorize = authorizerOn(provider);
    for (const authorization of ['Bearer a.b.c', 'Bearer not-a-jwt', 'Basic dXNlcjpwYXNzd29yZA==']) {
      await expect(authorize(authorization)).rejects.toThrow(UNAUTHORIZED);
    }
    expect(provider.fetches).toBe(0);
  });

  it('checked against the keys held while the provider is down; an unknown kid then is unavailable', async () => {
    const key = await newKey('held');
    const provider = await startProvider(jwksOf(key));
    const clock = { now: 1_000_000_000_000 };
    const authorize = authorizerOn(provider, clock);
    expect((await authorize(await bearer(provider, key))).principalId).toBe('caller-1');

    provider.answer = { status: 503, body: 'down' };
    const impostor = { ...(await newKey('held')), jwk: key.jwk };
    await expect(authorize(await bearer(provider, impostor))).rejects.toThrow(UNAUTHORIZED);
    await expect(authorize(await bearer(provider, key, { aud: 'another-api' }))).rejects.toThrow(
      UNAUTHORIZED,
    );
    expect(provider.fetches).toBe(1);

    // A kid rotated in while the provider is down looks like a made-up one: neither is known to be
    // bad, and the provider, asked, fails. Through the back-off after that failure too.
    const rotated = await newKey('rotated-in');
    await expect(authorize(await bearer(provider, rotated))).rejects.toThrow(UNAVAILABLE);
    clock.now += JWKS_FETCH_BACKOFF_MS - 1;
    await expect(authorize(await bearer(provider, await newKey('made-up')))).rejects.toThrow(UNAVAILABLE);
    expect(provider.fetches).toBe(2);
    expect((await authorize(await bearer(provider, key))).principalId).toBe('caller-1');

    // Back, with the rotated key: found.
    provider.answer = jwksOf(key, rotated);
    clock.now += 1;
    expect((await authorize(await bearer(provider, rotated))).principalId).toBe('caller-1');
  });
});
