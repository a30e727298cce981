import {
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign as signWith,
  verify as verifySignature,
} from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessTokenVerifier, isCanonicalBase64url } from '#functions/authorizer/access-token.ts';
import { createAuthorizer } from '#functions/authorizer/authorizer.ts';
import { createJwksCache } from '#functions/authorizer/jwks-cache.ts';
import { loadAuthorizerSettings } from '#functions/authorizer/settings.ts';
import { authorizerEnvironment } from '#infra/environment.ts';
import {
  JWKS_PATH,
  LOCAL_AUDIENCE,
  loadOrCreateLocalKeys,
  localIssuerUrl,
  signLocalToken,
} from '#infra/local/issuer.ts';
import { isHighS, lowSForm } from '#shared/auth/ecdsa-low-s.ts';
import { methodArnFor } from '#shared/auth/policy.ts';

/**
 * One token, one spelling (issue 45 item 2): a token re-spelt in the bits base64url leaves unused,
 * padded, or with its ECDSA signature's `s` replaced by `n − s`, verified all the same before, and
 * each spelling was a rate-limit bucket and an authorizer cache entry of its own.
 */

type Handler = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The order of P-256 (SEC 2 §2.4.2), written out here rather than taken from the code under test. */
const P256_ORDER = BigInt('0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551');

const methodArn = methodArnFor({
  region: 'eu-west-1',
  accountId: '123456789012',
  apiId: 'a1b2c3d4e5',
  stage: 'prod',
  method: 'GET',
  path: '/api/v3/pet/1',
});

let server: Server;
let issuer: string;
let jwksUrl: string;
let stateDir: string;
let key: { privateKey: CryptoKey; jwk: JWK };

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'token-spellings-'));
  const local = await loadOrCreateLocalKeys(stateDir);
  const pair = await generateKeyPair('ES256', { extractable: true });
  key = {
    privateKey: pair.privateKey,
    jwk: { ...(await exportJWK(pair.publicKey)), kid: 'spellings', alg: 'ES256', use: 'sig' },
  };
  const body = JSON.stringify({ keys: [key.jwk, ...local.publicJwks.keys] });
  server = createServer((request, response) => {
    response.writeHead(request.url === JWKS_PATH ? 200 : 404, { 'content-type': 'application/json' });
    response.end(request.url === JWKS_PATH ? body : '');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  issuer = localIssuerUrl(address.port);
  jwksUrl = `${issuer}${JWKS_PATH}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

function authorizerWith(requireLowS: boolean): Handler {
  const env = authorizerEnvironment({ issuer, audience: LOCAL_AUDIENCE, jwksUrl, requireLowS });
  return createAuthorizer({
    verify: createAccessTokenVerifier(loadAuthorizerSettings(env), createJwksCache()),
  });
}

async function signed(sub: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: issuer, aud: LOCAL_AUDIENCE, sub, iat: now, exp: now + 300, scope: 'read:pets' })
    .setProtectedHeader({ alg: 'ES256', kid: 'spellings', typ: 'at+jwt' })
    .sign(key.privateKey);
}

const authorize = (handler: Handler, token: string) =>
  handler({ type: 'TOKEN', methodArn, authorizationToken: `Bearer ${token}` });

/** The other spellings of a segment's last character: the same 6-bit group with other unused bits. */
function unusedBitVariants(segment: string): string[] {
  const unused = { 2: 0b1111, 3: 0b11 }[(segment.length % 4) as 2 | 3];
  if (unused === undefined) return [];
  const last = ALPHABET.indexOf(segment.at(-1) as string);
  return Array.from(
    { length: unused },
    (_, i) => `${segment.slice(0, -1)}${ALPHABET[last | (i + 1)]}`,
  ).filter((variant) => variant !== segment);
}

/** `(r, s)` as `(r, n − s)`: the other ECDSA signature of the same input. */
function highSTwinOf(token: string): string {
  const cut = token.lastIndexOf('.') + 1;
  const signature = Buffer.from(token.slice(cut), 'base64url');
  const s = BigInt(`0x${signature.subarray(32).toString('hex')}`);
  const twin = Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex');
  return `${token.slice(0, cut)}${Buffer.concat([signature.subarray(0, 32), twin]).toString('base64url')}`;
}

function sOf(token: string): bigint {
  const signature = Buffer.from(token.slice(token.lastIndexOf('.') + 1), 'base64url');
  return BigInt(`0x${signature.subarray(32).toString('hex')}`);
}

/** Whether a token's signature verifies with node:crypto alone, so the twin is a real one. */
function verifiesWith(jwk: JWK, token: string): boolean {
  const cut = token.lastIndexOf('.');
  return verifySignature(
    'sha256',
    Buffer.from(token.slice(0, cut)),
    { key: createPublicKey({ key: jwk as never, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    Buffer.from(token.slice(cut + 1), 'base64url'),
  );
}

describe('a JWS segment in base64url', () => {
  it('is canonical exactly when it is the encoding of its bytes', () => {
    for (let length = 0; length < 40; length++) {
      const canonical = randomBytes(length).toString('base64url');
      if (length > 0) expect(isCanonicalBase64url(canonical)).toBe(true);
      for (const variant of unusedBitVariants(canonical)) expect(isCanonicalBase64url(variant)).toBe(false);
    }
  });

  it.each([
    ['padding', 'YQ=='],
    ['the standard alphabet', 'a+b/'],
    ['a lone last character', 'YWJjZ'],
    ['white space', 'YW Jj'],
    ['nothing', ''],
  ])('is not canonical with %s', (_label, segment) => {
    expect(isCanonicalBase64url(segment)).toBe(false);
  });
});

describe('one token has one spelling the authorizer accepts', () => {
  it('refuses each of the 15 spellings of an ES256 signature that differ only in its 4 unused bits', async () => {
    const handler = authorizerWith(false);
    const token = await signed('one-spelling');
    expect((await authorize(handler, token)).principalId).toBe('one-spelling');
    const signature = token.slice(token.lastIndexOf('.') + 1);
    const variants = unusedBitVariants(signature);
    expect(variants).toHaveLength(15);
    for (const variant of variants) {
      const respelt = `${token.slice(0, token.lastIndexOf('.') + 1)}${variant}`;
      // The same bytes: Node's decoder ignores the unused bits.
      expect(Buffer.from(variant, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
      await expect(authorize(handler, respelt)).rejects.toThrow(/^Unauthorized$/);
    }
  });

  it('refuses a header or payload re-spelt in its unused bits, padded, or in the standard alphabet', async () => {
    const handler = authorizerWith(false);
    // A `sub` long enough that the payload's last character has unused bits.
    let token = await signed('respelt-segments');
    for (let i = 1; (token.split('.')[1] as string).length % 4 === 0; i++) {
      token = await signed(`respelt-segments-${'x'.repeat(i)}`);
    }
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const respelt = [
      ...unusedBitVariants(header).map((h) => `${h}.${payload}.${signature}`),
      ...unusedBitVariants(payload).map((p) => `${header}.${p}.${signature}`),
      `${header}.${payload}.${signature}${'='.repeat((4 - (signature.length % 4)) % 4)}`,
      `${header}=.${payload}.${signature}`,
      `${header}.${payload}.${Buffer.from(signature, 'base64url').toString('base64')}`,
    ];
    expect(unusedBitVariants(payload).length).toBeGreaterThan(0);
    for (const spelling of respelt) {
      expect(spelling).not.toBe(token);
      await expect(authorize(handler, spelling)).rejects.toThrow(/^Unauthorized$/);
    }
  });

  it('refuses the high-S twin of an ECDSA signature where the stage requires low S, and takes the low form', async () => {
    const handler = authorizerWith(true);
    for (let i = 0; i < 8; i++) {
      const token = await signed(`twin-${i}`);
      const twin = highSTwinOf(token);
      // Both verify: the twin is a real second spelling of the token.
      expect(verifiesWith(key.jwk, token) && verifiesWith(key.jwk, twin)).toBe(true);
      const [low, high] = sOf(token) <= P256_ORDER / 2n ? [token, twin] : [twin, token];
      expect((await authorize(handler, low)).principalId).toBe(`twin-${i}`);
      await expect(authorize(handler, high)).rejects.toThrow(/^Unauthorized$/);
    }
  });

  it('takes both forms where the stage does not require low S (a provider that does not normalise)', async () => {
    const handler = authorizerWith(false);
    const token = await signed('both-forms');
    expect((await authorize(handler, token)).principalId).toBe('both-forms');
    expect((await authorize(handler, highSTwinOf(token))).principalId).toBe('both-forms');
  });

  it('gets from the local issuer only low-S tokens, which the local authorizer accepts', async () => {
    const handler = authorizerWith(true);
    const port = Number(new URL(issuer).port);
    for (let i = 0; i < 16; i++) {
      const token = await signLocalToken({ sub: `local-${i}`, scope: 'read:pets', port, stateDir });
      expect(sOf(token) <= P256_ORDER / 2n).toBe(true);
      expect((await authorize(handler, token)).principalId).toBe(`local-${i}`);
      await expect(authorize(handler, highSTwinOf(token))).rejects.toThrow(/^Unauthorized$/);
    }
  });
});

describe('the low-S form of an ECDSA signature', () => {
  it.each([
    ['ES256', 'P-256', 'sha256'],
    ['ES384', 'P-384', 'sha384'],
    ['ES512', 'P-521', 'sha512'],
  ])('%s: of a high signature, is another signature that verifies, and low', (alg, namedCurve, hash) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve });
    const data = Buffer.from('header.payload');
    let high = 0;
    // Half of OpenSSL's signatures come out high; 24 tries miss none with odds 2^-24.
    for (let i = 0; i < 24; i++) {
      const signature = signWith(hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      const low = Buffer.from(lowSForm(alg, signature));
      expect(verifySignature(hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, low)).toBe(true);
      expect(isHighS(alg, low)).toBe(false);
      if (isHighS(alg, signature)) {
        high++;
        expect(low.equals(signature)).toBe(false);
        expect(low.subarray(0, low.length / 2)).toEqual(signature.subarray(0, signature.length / 2));
      } else {
        expect(low.equals(signature)).toBe(true);
      }
    }
    expect(high).toBeGreaterThan(0);
  });
});
