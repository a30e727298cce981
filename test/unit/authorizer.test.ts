import { KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import {
  base64url,
  CompactSign,
  type CryptoKey,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JSONWebKeySet,
  type JWTPayload,
  SignJWT,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccessTokenVerifier } from '#functions/authorizer/access-token.ts';
import { createAuthorizer, PROVIDER_UNAVAILABLE } from '#functions/authorizer/authorizer.ts';
import { createJwksCache, JWKS_MAX_BYTES } from '#functions/authorizer/jwks-cache.ts';
import { loadAuthorizerSettings } from '#functions/authorizer/settings.ts';
import { type AuthSettings, authorizerEnvironment, defaultTokenRules } from '#infra/environment.ts';
import {
  JWKS_PATH,
  LOCAL_AUDIENCE,
  loadOrCreateLocalKeys,
  localIssuerUrl,
  signLocalToken,
} from '#infra/local/issuer.ts';
import { isAllowed } from '#infra/local/policy-evaluation.ts';
import { methodArnFor } from '#shared/auth/policy.ts';
import { CLOCK_TOLERANCE_SECONDS } from '#shared/auth/token-time.ts';
import { type Route, routes } from '#shared/routes.ts';
import { linesWrittenBy, logLines, metricLines } from '../support/logs.ts';

type Handler = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
/** A token the authorizer could not check, the provider failing: API Gateway's 503, not its 401. */
const UNAVAILABLE = new RegExp(`^${PROVIDER_UNAVAILABLE}$`);

interface TestKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
}

const api = { region: 'eu-west-1', accountId: '123456789012', apiId: 'a1b2c3d4e5', stage: 'prod' };
const prefix = `arn:aws:execute-api:${api.region}:${api.accountId}:${api.apiId}/${api.stage}`;
const arn = (method: string, path: string) => methodArnFor({ ...api, method, path });
const authorizedRoutes = (routes as readonly Route[]).filter((route) => route.scopes !== null);
/** A concrete request path of a route: every path parameter filled in. */
const concretePath = (route: Route) => route.path.replace(/\{[^}]+\}/g, '42');

let jwksServer: JwksServer;
let issuer: string;
let stateDir: string;
let handler: Handler;
let keys: Record<'es256' | 'rs256' | 'ps256' | 'eddsa', TestKey>;
/** What the identity provider publishes: the test keys', the local issuer's and an encryption key. */
let jwks: JSONWebKeySet;
let encryptionKey: TestKey;

beforeAll(async () => {
  keys = {
    es256: await testKey('es-1', 'ES256'),
    rs256: await testKey('rs-1', 'RS256'),
    ps256: await testKey('ps-1', 'PS256'),
    eddsa: await testKey('ed-1', 'EdDSA'),
  };
  stateDir = await mkdtemp(join(tmpdir(), 'authorizer-test-'));
  const local = await loadOrCreateLocalKeys(stateDir);
  encryptionKey = await testKey('enc-1', 'RS256');
  jwks = {
    keys: [
      ...(await Promise.all(Object.values(keys).map(publicJwk))),
      ...local.publicJwks.keys,
      // An encryption key beside the signing keys, as Keycloak publishes one.
      { ...(await exportJWK(encryptionKey.publicKey)), kid: encryptionKey.kid, alg: 'RSA-OAEP', use: 'enc' },
    ],
  };
  // The issuer is the JWKS server's own base URL, exactly as for the local gateway.
  jwksServer = await startJwksServer(() => ({ status: 200, body: JSON.stringify(jwks) }));
  issuer = localIssuerUrl(jwksServer.port);
  handler = await loadHandlerFor(jwksServer.url);
});

afterAll(async () => {
  await jwksServer?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('the authorizer rejects with Unauthorized', () => {
  it.each([
    ['no token', undefined],
    ['an empty header', ''],
    ['the Bearer scheme without a token', 'Bearer '],
    ['another scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['a bare token without scheme', 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln'],
    ['a token that is not a JWT', 'Bearer not-a-jwt'],
    ['a JWT of garbage segments', 'Bearer a.b.c'],
    ['two tokens', 'Bearer a.b.c d.e.f'],
  ])('%s', async (_label, authorization) => {
    await expectUnauthorized(authorization);
  });

  it('an expired token', async () => {
    const now = nowSeconds();
    await expectUnauthorized(await bearer({ iat: now - 600, exp: now - 60 }));
  });

  it('a token that is not valid yet (nbf in the future)', async () => {
    await expectUnauthorized(await bearer({ nbf: nowSeconds() + 60 }));
  });

  it('a token without exp', async () => {
    await expectUnauthorized(await bearer({ exp: undefined }));
  });

  it('a token whose exp is not a number', async () => {
    await expectUnauthorized(await bearer({ exp: 'tomorrow' as never }));
  });

  it('a token without sub', async () => {
    await expectUnauthorized(await bearer({ sub: undefined }));
  });

  it('a token with an empty sub', async () => {
    await expectUnauthorized(await bearer({ sub: '' }));
  });

  it('a token of another issuer', async () => {
    await expectUnauthorized(await bearer({ iss: 'https://evil.example' }));
  });

  it('a token without iss', async () => {
    await expectUnauthorized(await bearer({ iss: undefined }));
  });

  it('a token for another audience', async () => {
    await expectUnauthorized(await bearer({ aud: 'another-api' }));
  });

  it('a token without aud', async () => {
    await expectUnauthorized(await bearer({ aud: undefined }));
  });

  it('a typed access token without aud, its client_id the audience: RFC 9068 §4 requires aud', async () => {
    await expectUnauthorized(await bearer({ aud: undefined, client_id: LOCAL_AUDIENCE }));
  });

  it('a token without aud whose client_id is another app client', async () => {
    await expectUnauthorized(await bearer({ aud: undefined, client_id: 'another-client' }));
  });

  it('a token whose aud names another API even if client_id matches', async () => {
    await expectUnauthorized(await bearer({ aud: 'another-api', client_id: LOCAL_AUDIENCE }));
  });

  it('a token signed by another key under a known kid', async () => {
    const impostor = await testKey(keys.es256.kid, 'ES256');
    await expectUnauthorized(await bearer({}, impostor));
  });

  it('a token signed by a key of an unknown kid', async () => {
    await expectUnauthorized(await bearer({}, await testKey('unknown-kid', 'ES256')));
  });

  it('a token whose payload was altered after signing', async () => {
    const [header, , signature] = (await sign({ scope: 'read:pets' })).split('.');
    const payload = base64url.encode(JSON.stringify({ ...validClaims(), scope: 'read:pets write:wallet' }));
    await expectUnauthorized(`Bearer ${header}.${payload}.${signature}`);
  });

  it('an unsigned token (alg none)', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: keys.es256.kid }));
    const payload = base64url.encode(JSON.stringify(validClaims()));
    await expectUnauthorized(`Bearer ${header}.${payload}.`);
  });

  it('a token signed with another algorithm than the one its key is published for', async () => {
    // The RS256 key itself, but RS512: a key that names its `alg` verifies that one only.
    const token = await new SignJWT(validClaims())
      .setProtectedHeader({ alg: 'RS512', kid: keys.rs256.kid })
      .sign(KeyObject.from(keys.rs256.privateKey));
    await expectUnauthorized(`Bearer ${token}`);
  });

  it('a token claiming an RSA algorithm under the kid of an EC key', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'RS256', kid: keys.es256.kid }));
    const [, payload, signature] = (await sign()).split('.');
    await expectUnauthorized(`Bearer ${header}.${payload}.${signature}`);
  });

  it.each([
    ['PEM', async (key: CryptoKey) => exportSPKI(key)],
    ['JWK', async (key: CryptoKey) => JSON.stringify(await exportJWK(key))],
  ])('a token signed with HS256 using the public key (%s) as secret', async (_format, encode) => {
    const secret = new TextEncoder().encode(await encode(keys.rs256.publicKey));
    const token = await new SignJWT(validClaims())
      .setProtectedHeader({ alg: 'HS256', kid: keys.rs256.kid })
      .sign(secret);
    await expectUnauthorized(`Bearer ${token}`);
  });
});

describe('the authorizer refuses what is not a current access token (RFC 9068, RFC 8725)', () => {
  it.each([
    ['no typ', { typ: undefined }],
    ['typ JWT', { typ: 'JWT' }],
    ['the typ of an ID token by convention', { typ: 'id_token+jwt' }],
    ['a typ that only contains at+jwt', { typ: 'x-at+jwt' }],
  ])('a token with %s', async (_label, header) => {
    await expectUnauthorized(await bearer({}, undefined, header));
  });

  it('an ID token (token_use id) of the same issuer and client', async () => {
    await expectUnauthorized(await bearer({ token_use: 'id' }));
  });

  it('a token issued in the future beyond the clock tolerance', async () => {
    await expectUnauthorized(await bearer({ iat: nowSeconds() + 60 }));
  });

  it.each([
    ['iat', { iat: 'yesterday' }],
    ['nbf', { nbf: 'now' }],
    ['iat as an array', { iat: [nowSeconds()] }],
  ])('a token whose %s is not a number', async (_label, claims) => {
    await expectUnauthorized(await bearer(claims as unknown as JWTPayload));
  });

  it.each(['exp', 'iat', 'nbf'])('a token whose %s JSON reads as Infinity (1e400)', async (claim) => {
    const claims = { ...validClaims(), [claim]: '__INFINITE__' };
    await expectUnauthorized(
      await bearerOfPayloadText(JSON.stringify(claims).replace('"__INFINITE__"', '1e400')),
    );
  });

  it('a token living one second longer than the maximum (exp - iat)', async () => {
    const iat = nowSeconds();
    await expectUnauthorized(await bearer({ iat, exp: iat + defaultTokenRules.maxTokenLifetimeSeconds + 1 }));
  });

  it('a token without iat living longer than the maximum from its nbf', async () => {
    const nbf = nowSeconds();
    await expectUnauthorized(
      await bearer({ iat: undefined, nbf, exp: nbf + defaultTokenRules.maxTokenLifetimeSeconds + 1 }),
    );
  });

  it('a token with neither iat nor nbf (no lifetime to check)', async () => {
    await expectUnauthorized(await bearer({ iat: undefined }));
  });

  it.each([
    ['longer than any address (3,000 characters: it would become a DynamoDB key)', 'a'.repeat(3_000)],
    ['one character longer than an address may be', 'a'.repeat(257)],
    ['with a zero-width joiner', 'alice\u200Dbob'],
    ['with a bidi override', 'alice\u202Ebob'],
    ['with a control character', 'alice\u0007'],
    ['not in NFC', 'jose\u0301'],
    // Issue 25: the address profile (PRECIS, UTS #39) applies to the sub as to any address.
    ['with a combining grapheme joiner', 'dave\u034F'],
    ['with a variation selector', 'dave\uFE0F'],
    ['with a Mongolian variation selector', 'dave\u180B'],
    ['with a Khmer inherent vowel', 'dave\u17B4'],
    ['with the Hangul filler', 'dave\u3164'],
    ['with the braille blank', 'dave\u2800'],
    ['with a space', 'dave '],
    ['with a no-break space', 'dave\u00A0'],
    ['with a Cyrillic а among Latin letters', 'd\u0430ve'],
    ['in fullwidth letters', '\uFF44\uFF41\uFF56\uFF45'],
  ])('a sub %s', async (_label, sub) => {
    await expectUnauthorized(await bearer({ sub }));
  });

  it.each([
    ['token-use', () => bearer({ token_use: 'id' })],
    ['type', () => bearer({}, undefined, { typ: 'JWT' })],
    ['issued-in-future', () => bearer({ iat: nowSeconds() + 60 })],
    ['claims', () => bearer({ iat: 'yesterday' as never })],
    ['lifetime', () => bearer({ exp: nowSeconds() + defaultTokenRules.maxTokenLifetimeSeconds + 60 })],
    ['subject', () => bearer({ sub: 'a'.repeat(3_000) })],
  ])('and logs the reason %s as a token rejection', async (reason, authorization) => {
    const event = tokenEvent(await authorization());
    const lines = await linesWrittenBy(() => handler(event).catch(() => undefined));
    expect(logLines(lines)).toEqual([
      expect.objectContaining({ level: 'WARN', outcome: 'invalid-token', reason }),
    ]);
  });
});

describe('the authorizer accepts the edges of a current access token', () => {
  it.each([['application/at+jwt'], ['AT+JWT'], ['Application/At+Jwt']])('typ %s', async (typ) => {
    expect((await handler(tokenEvent(await bearer({ sub: 'typed' }, undefined, { typ })))).principalId).toBe(
      'typed',
    );
  });

  it('iat up to the clock tolerance ahead', async () => {
    const iat = nowSeconds() + CLOCK_TOLERANCE_SECONDS - 1;
    expect((await handler(tokenEvent(await bearer({ sub: 'skewed', iat })))).principalId).toBe('skewed');
  });

  it('a lifetime of exactly the maximum, and token_use access', async () => {
    const iat = nowSeconds();
    const exp = iat + defaultTokenRules.maxTokenLifetimeSeconds;
    const result = await handler(tokenEvent(await bearer({ sub: 'long', iat, exp, token_use: 'access' })));
    expect(result.principalId).toBe('long');
  });

  it('a sub of 256 characters beyond ASCII, in NFC', async () => {
    const sub = '\u00E9'.repeat(256);
    expect((await handler(tokenEvent(await bearer({ sub })))).principalId).toBe(sub);
  });

  it('without typ where the stage does not require it (Amazon Cognito), but still no ID token', async () => {
    const lenient = await loadHandlerFor(jwksServer.url, { requireAtJwtTyp: false });
    const untyped = await bearer({ sub: 'cognito', token_use: 'access' }, undefined, { typ: undefined });
    expect((await lenient(tokenEvent(untyped))).principalId).toBe('cognito');
    const idToken = await bearer({ sub: 'cognito', token_use: 'id' }, undefined, { typ: undefined });
    await expect(lenient(tokenEvent(idToken))).rejects.toThrow(/^Unauthorized$/);
  });

  it('with the lifetime maximum a stage sets', async () => {
    const strict = await loadHandlerFor(jwksServer.url, { maxTokenLifetimeSeconds: 600 });
    const iat = nowSeconds();
    expect((await strict(tokenEvent(await bearer({ sub: 'short', iat, exp: iat + 600 })))).principalId).toBe(
      'short',
    );
    await expect(strict(tokenEvent(await bearer({ iat, exp: iat + 601 })))).rejects.toThrow(/^Unauthorized$/);
  });
});

describe('the authorizer rejects as unavailable, not Unauthorized, when the JWKS cannot be fetched', () => {
  it('because the identity provider answers 500', async () => {
    const failing = await startJwksServer(() => ({ status: 500, body: 'boom' }));
    try {
      const fresh = await loadHandlerFor(failing.url);
      await expect(fresh(tokenEvent(await bearer()))).rejects.toThrow(UNAVAILABLE);
    } finally {
      await failing.close();
    }
  });

  it.each([
    ['with its Content-Length', true],
    ['streamed, without one', false],
  ])('because the identity provider answers a body larger than any JWKS (%s)', async (_label, declared) => {
    const text = JSON.stringify(jwks);
    // The keys, padded with whitespace to the limit: a JWKS still, and the most that is read.
    const atLimit = text + ' '.repeat(JWKS_MAX_BYTES - Buffer.byteLength(text));
    const token = await bearer();
    for (const [body, accepted] of [
      [atLimit, true],
      [`${atLimit} `, false],
      [atLimit.repeat(40), false],
    ] as const) {
      const provider = await startJwksServer(() => ({ status: 200, body, contentLength: declared }));
      try {
        const fresh = await loadHandlerFor(provider.url);
        const lines = await linesWrittenBy(() => fresh(tokenEvent(token)).catch((error: Error) => error));
        if (accepted) {
          expect(logLines(lines)).toEqual([]);
          expect((await fresh(tokenEvent(token))).principalId).toBeDefined();
          continue;
        }
        expect(logLines(lines)).toEqual([
          expect.objectContaining({
            level: 'ERROR',
            reason: 'jwks-fetch',
            detail: expect.stringContaining('larger'),
          }),
        ]);
        await expect(fresh(tokenEvent(token))).rejects.toThrow(UNAVAILABLE);
      } finally {
        await provider.close();
      }
    }
  });

  it('because nothing listens at the JWKS URL', async () => {
    const gone = await startJwksServer(() => ({ status: 200, body: '{"keys":[]}' }));
    await gone.close();
    const fresh = await loadHandlerFor(gone.url);
    await expect(fresh(tokenEvent(await bearer()))).rejects.toThrow(UNAVAILABLE);
  });
});

describe('the authorizer logs each rejection once, by kind', () => {
  it.each([
    ['an expired token', () => bearer({ exp: nowSeconds() - 60 }), 'expired'],
    ['another issuer', () => bearer({ iss: 'https://evil.example' }), 'issuer'],
    ['an unknown kid', async () => bearer({}, await testKey('never-published', 'ES256')), 'unknown-kid'],
    ['a forged signature', async () => bearer({}, await testKey(keys.es256.kid, 'ES256')), 'signature'],
    ['the kid of an encryption key, signed with it', () => bearer({}, encryptionKey), 'unknown-kid'],
    ['another audience', () => bearer({ aud: 'another-api' }), 'audience'],
    ['no token', async () => undefined, 'no-bearer-token'],
  ])('%s: a WARN counted as AuthRejections', async (_label, authorization, reason) => {
    const event = tokenEvent(await authorization());
    const lines = await linesWrittenBy(() => handler(event).catch(() => undefined));
    expect(logLines(lines)).toEqual([
      expect.objectContaining({ level: 'WARN', outcome: 'invalid-token', reason }),
    ]);
    expect(metricLines(lines)).toEqual([expect.objectContaining({ route: 'authorizer', AuthRejections: 1 })]);
  });

  it('an identity provider that fails: an ERROR counted as AuthErrors', async () => {
    const failing = await startJwksServer(() => ({ status: 503, body: 'down' }));
    try {
      const fresh = await loadHandlerFor(failing.url);
      const event = tokenEvent(await bearer());
      const lines = await linesWrittenBy(() => fresh(event).catch(() => undefined));
      expect(logLines(lines)).toEqual([
        expect.objectContaining({
          level: 'ERROR',
          outcome: 'verification-error',
          reason: 'jwks-fetch',
          detail: expect.stringContaining('503'),
        }),
      ]);
      expect(metricLines(lines)).toEqual([expect.objectContaining({ route: 'authorizer', AuthErrors: 1 })]);
    } finally {
      await failing.close();
    }
  });
});

describe('the authorizer follows the JWKS of the identity provider', () => {
  it('stops accepting a withdrawn key once its cached JWKS is 10 minutes old', async () => {
    const withdrawn = await testKey('withdrawn', 'ES256');
    let published: JSONWebKeySet = { keys: [await publicJwk(withdrawn)] };
    const provider = await startJwksServer(() => ({ status: 200, body: JSON.stringify(published) }));
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now');
    try {
      const fresh = await loadHandlerFor(provider.url);
      const token = await bearer({ sub: 'rotating', exp: nowSeconds() + 3600 }, withdrawn);
      expect((await fresh(tokenEvent(token))).principalId).toBe('rotating');

      published = { keys: [await publicJwk(keys.es256)] };
      clock.mockReturnValue(now + 9 * 60_000);
      expect((await fresh(tokenEvent(token))).principalId).toBe('rotating');

      clock.mockReturnValue(now + 11 * 60_000);
      await expect(fresh(tokenEvent(token))).rejects.toThrow(/^Unauthorized$/);
    } finally {
      clock.mockRestore();
      await provider.close();
    }
  });

  it('keeps the keys it holds while a refresh fails, trying again every 30 s, not on every token', async () => {
    const held = await testKey('held', 'ES256');
    let answer = { status: 200, body: JSON.stringify({ keys: [await publicJwk(held)] }) };
    let fetches = 0;
    const provider = await startJwksServer(() => {
      fetches++;
      return answer;
    });
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now');
    try {
      const fresh = await loadHandlerFor(provider.url);
      const token = await bearer({ sub: 'steady', exp: nowSeconds() + 3600 }, held);
      expect((await fresh(tokenEvent(token))).principalId).toBe('steady');
      expect(fetches).toBe(1);

      answer = { status: 503, body: 'down' };
      clock.mockReturnValue(now + 11 * 60_000);
      const lines = await linesWrittenBy(async () => {
        expect((await fresh(tokenEvent(token))).principalId).toBe('steady');
      });
      expect(logLines(lines)).toEqual([expect.objectContaining({ level: 'WARN', reason: 'jwks-refresh' })]);
      expect(metricLines(lines)).toEqual([
        expect.objectContaining({ route: 'authorizer', JwksRefreshFailures: 1 }),
      ]);
      expect(fetches).toBe(2);

      clock.mockReturnValue(now + 11 * 60_000 + 20_000);
      expect((await fresh(tokenEvent(token))).principalId).toBe('steady');
      expect(fetches).toBe(2);

      answer = { status: 200, body: JSON.stringify({ keys: [await publicJwk(keys.es256)] }) };
      clock.mockReturnValue(now + 11 * 60_000 + 31_000);
      await expect(fresh(tokenEvent(token))).rejects.toThrow(/^Unauthorized$/);
      // The refresh, then aws-jwt-verify's own look for the kid the new JWKS no longer has.
      expect(fetches).toBe(4);
    } finally {
      clock.mockRestore();
      await provider.close();
    }
  });

  it('finds a key published after its JWKS was cached (key rotation)', async () => {
    const rotated = await testKey('rotated-in', 'ES256');
    let published: JSONWebKeySet = { keys: [await publicJwk(keys.es256)] };
    const provider = await startJwksServer(() => ({ status: 200, body: JSON.stringify(published) }));
    try {
      const fresh = await loadHandlerFor(provider.url);
      expect((await fresh(tokenEvent(await bearer({ sub: 'before' })))).principalId).toBe('before');
      published = { keys: [await publicJwk(keys.es256), await publicJwk(rotated)] };
      expect((await fresh(tokenEvent(await bearer({ sub: 'after' }, rotated)))).principalId).toBe('after');
    } finally {
      await provider.close();
    }
  });
});

describe('the authorizer accepts a valid token', () => {
  it('a Cognito sub (a UUID) as Cognito issues it, as before the address profile', async () => {
    const sub = '3f1c2a6e-8d4b-4c7e-9a51-2b7d9e0f6a13';
    expect((await handler(tokenEvent(await bearer({ sub })))).principalId).toBe(sub);
  });

  it.each(['es256', 'rs256', 'ps256', 'eddsa'] as const)('signed with %s', async (name) => {
    const result = await handler(tokenEvent(await bearer({ sub: `signed-${name}` }, keys[name])));
    expect(result.principalId).toBe(`signed-${name}`);
  });

  it('from Amazon Cognito: no aud, the configured audience in client_id, where the stage takes untyped tokens', async () => {
    const lenient = await loadHandlerFor(jwksServer.url, { requireAtJwtTyp: false });
    const cognito = await bearer({ aud: undefined, client_id: LOCAL_AUDIENCE, sub: 'c' }, undefined, {
      typ: undefined,
    });
    expect((await lenient(tokenEvent(cognito))).principalId).toBe('c');
  });

  it('with principalId and context taken from the token', async () => {
    const exp = nowSeconds() + 300;
    const result = await handler(
      tokenEvent(await bearer({ sub: 'alice', scope: 'read:pets write:pets', exp })),
    );
    expect(result.principalId).toBe('alice');
    expect(result.context).toEqual({ sub: 'alice', scope: 'read:pets write:pets', exp });
  });

  it.each([
    [['write:pets']],
    [['read:pets']],
    [['read:pets', 'write:pets']],
    [['read:wallet']],
    [['read:wallet', 'write:wallet']],
    [['write:pets', 'read:pets', 'read:wallet', 'write:wallet']],
  ])('allowing exactly the routes whose scopes %j all hold', async (scopes) => {
    const { policyDocument } = await handler(tokenEvent(await bearer({ scope: scopes.join(' ') })));
    for (const route of authorizedRoutes) {
      const expected = (route.scopes ?? []).every((scope) => scopes.includes(scope));
      expect(isAllowed(policyDocument, arn(route.method, concretePath(route))), route.operationId).toBe(
        expected,
      );
    }
  });

  it('with write:pets: POST /api/v3/pet allowed, reading pets and the wallet not', async () => {
    const { policyDocument } = await handler(tokenEvent(await bearer({ scope: 'write:pets' })));
    expect(policyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'execute-api:Invoke',
        Resource: [
          `${prefix}/POST/api/v3/pet`,
          `${prefix}/PUT/api/v3/pet`,
          `${prefix}/POST/api/v3/pet/*`,
          `${prefix}/DELETE/api/v3/pet/*`,
          `${prefix}/POST/api/v3/pet/*/uploadImage`,
          `${prefix}/*/*/`,
        ],
      },
    ]);
    expect(isAllowed(policyDocument, arn('POST', '/api/v3/pet'))).toBe(true);
    expect(isAllowed(policyDocument, arn('POST', '/api/v3/pet/42/uploadImage'))).toBe(true);
    expect(isAllowed(policyDocument, arn('GET', '/api/v3/pet/42'))).toBe(false);
    expect(isAllowed(policyDocument, arn('GET', '/api/v3/pet/42/images/Q2hlY2tvdXRJbWFnZTAxMA'))).toBe(false);
    expect(isAllowed(policyDocument, arn('GET', '/api/wallet/balance'))).toBe(false);
  });

  it('with read:pets: any pet id allowed through a wildcard resource', async () => {
    const { policyDocument } = await handler(tokenEvent(await bearer({ scope: 'read:pets' })));
    expect(policyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'execute-api:Invoke',
        Resource: [
          `${prefix}/GET/api/v3/pet/findByStatus`,
          `${prefix}/GET/api/v3/pet/findByTags`,
          `${prefix}/GET/api/v3/pet/*`,
          `${prefix}/GET/api/v3/pet/*/images/*`,
          `${prefix}/*/*/`,
        ],
      },
    ]);
    expect(isAllowed(policyDocument, arn('GET', '/api/v3/pet/9007199254740991'))).toBe(true);
    expect(isAllowed(policyDocument, arn('GET', '/api/v3/pet/42/images/Q2hlY2tvdXRJbWFnZTAxMA'))).toBe(true);
    expect(isAllowed(policyDocument, arn('POST', '/api/v3/pet'))).toBe(false);
    expect(isAllowed(policyDocument, arn('POST', '/api/v3/pet/42/uploadImage'))).toBe(false);
  });

  it('with the scopes of an scp array claim', async () => {
    const result = await handler(
      tokenEvent(await bearer({ scope: undefined, scp: ['read:wallet', 'write:wallet'] })),
    );
    expect(result.context?.scope).toBe('read:wallet write:wallet');
    expect(isAllowed(result.policyDocument, arn('GET', '/api/wallet/balance'))).toBe(true);
    expect(isAllowed(result.policyDocument, arn('POST', '/api/wallet/send'))).toBe(true);
    expect(isAllowed(result.policyDocument, arn('POST', '/api/v3/pet'))).toBe(false);
  });

  it.each([
    ['no scope claim', undefined],
    ['an empty scope claim', ''],
    ['only scopes the API does not know', 'openid profile'],
  ])('with %s: no route, only the paths ending in "/" every function refuses', async (_label, scope) => {
    const { policyDocument, context } = await handler(tokenEvent(await bearer({ scope })));
    expect(policyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: [`${prefix}/*/*/`] },
    ]);
    expect(context?.scope).toBe(scope ?? '');
    for (const route of authorizedRoutes) {
      expect(isAllowed(policyDocument, arn(route.method, concretePath(route)))).toBe(false);
    }
  });

  it('with the same policy whichever route the first request named (authorizer cache is per token)', async () => {
    const token = await bearer({ scope: 'read:pets write:wallet' });
    const results = await Promise.all(
      [arn('GET', '/api/v3/pet/1'), arn('POST', '/api/wallet/send'), arn('GET', '/api/wallet/balance')].map(
        (methodArn) => handler(tokenEvent(token, methodArn)),
      ),
    );
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it('allowing nothing on another stage or API', async () => {
    const { policyDocument } = await handler(tokenEvent(await bearer({ scope: 'write:pets' })));
    expect(
      isAllowed(policyDocument, methodArnFor({ ...api, stage: 'dev', method: 'POST', path: '/api/v3/pet' })),
    ).toBe(false);
    expect(
      isAllowed(policyDocument, methodArnFor({ ...api, apiId: 'zzzz', method: 'POST', path: '/api/v3/pet' })),
    ).toBe(false);
  });

  it.each(['bearer', 'BEARER', 'Bearer'])('with the scheme spelt %s', async (scheme) => {
    const token = await sign({ sub: 'bob' });
    expect((await handler(tokenEvent(`${scheme} ${token}`))).principalId).toBe('bob');
  });

  it.each(['es256', 'rs256', 'eddsa'] as const)('signed with %s', async (name) => {
    const result = await handler(tokenEvent(await bearer({ sub: `signed-${name}` }, keys[name])));
    expect(result.principalId).toBe(`signed-${name}`);
  });

  it('issued by the local issuer (npm run token)', async () => {
    const token = await signLocalToken({
      sub: 'local-dev',
      scope: 'read:pets',
      port: jwksServer.port,
      stateDir,
    });
    const result = await handler(tokenEvent(`Bearer ${token}`));
    expect(result.principalId).toBe('local-dev');
    expect(isAllowed(result.policyDocument, arn('GET', '/api/v3/pet/7'))).toBe(true);
  });

  it('but fails as a gateway misconfiguration, not Unauthorized, when the methodArn is not one', async () => {
    await expect(handler(tokenEvent(await bearer(), 'not-an-arn'))).rejects.toThrow(/execute-api method ARN/);
  });
});

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function validClaims(): JWTPayload {
  const now = nowSeconds();
  return { iss: issuer, aud: LOCAL_AUDIENCE, sub: 'user-1', iat: now, exp: now + 300, scope: 'read:pets' };
}

/** The `typ` of an access token (RFC 9068), unless a test says otherwise. */
const AT_JWT: TokenHeader = { typ: 'at+jwt' };

/** Header parameters beside `alg` and `kid`; an `undefined` value leaves one out. */
type TokenHeader = Record<string, string | undefined>;

/** A token of valid claims, overridden by `claims` (an `undefined` value removes the claim). */
async function sign(claims: JWTPayload = {}, key: TestKey = keys.es256, header = AT_JWT): Promise<string> {
  const payload = Object.fromEntries(
    Object.entries({ ...validClaims(), ...claims }).filter(([, value]) => value !== undefined),
  );
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...definedOnly(header) })
    .sign(key.privateKey);
}

async function bearer(claims: JWTPayload = {}, key?: TestKey, header?: TokenHeader): Promise<string> {
  return `Bearer ${await sign(claims, key, header)}`;
}

/** A token whose payload is `json` exactly as written, e.g. a number JSON reads as Infinity. */
async function bearerOfPayloadText(json: string, key: TestKey = keys.es256): Promise<string> {
  const token = await new CompactSign(new TextEncoder().encode(json))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
  return `Bearer ${token}`;
}

function definedOnly(header: TokenHeader): Record<string, string> {
  return Object.fromEntries(Object.entries(header).filter(([, value]) => value !== undefined)) as Record<
    string,
    string
  >;
}

function tokenEvent(authorization: string | undefined, methodArn = arn('GET', '/api/v3/pet/1')) {
  return { type: 'TOKEN', methodArn, authorizationToken: authorization } as APIGatewayTokenAuthorizerEvent;
}

async function expectUnauthorized(authorization: string | undefined): Promise<void> {
  await expect(handler(tokenEvent(authorization))).rejects.toThrow(/^Unauthorized$/);
}

async function testKey(kid: string, alg: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicKey };
}

async function publicJwk(key: TestKey) {
  return { ...(await exportJWK(key.publicKey)), kid: key.kid, alg: key.alg, use: 'sig' };
}

/**
 * A fresh authorizer, as a Lambda cold start builds it, for this suite's issuer and audience and
 * the JWKS at `jwksUrl`: its settings read from the variables a deployment gives it, its own JWKS
 * cache and memos.
 */
async function loadHandlerFor(jwksUrl: string, rules: Partial<AuthSettings> = {}): Promise<Handler> {
  const env = authorizerEnvironment({ issuer, audience: LOCAL_AUDIENCE, jwksUrl, ...rules });
  return createAuthorizer({
    verify: createAccessTokenVerifier(loadAuthorizerSettings(env), createJwksCache()),
  });
}

interface JwksServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** An identity provider on loopback; its answers go out chunked unless they declare their length. */
async function startJwksServer(
  answer: () => { status: number; body: string; contentLength?: boolean },
): Promise<JwksServer> {
  const server: Server = createServer((request, response) => {
    const { status, body, contentLength } = request.url === JWKS_PATH ? answer() : { status: 404, body: '' };
    const length = contentLength ? { 'content-length': Buffer.byteLength(body) } : {};
    response.writeHead(status, { 'content-type': 'application/json', ...length }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('JWKS server has no port');
  return {
    port: address.port,
    url: `${localIssuerUrl(address.port)}${JWKS_PATH}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
