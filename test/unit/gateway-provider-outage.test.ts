import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccessTokenVerifier } from '#functions/authorizer/access-token.ts';
import { createAuthorizer } from '#functions/authorizer/authorizer.ts';
import { createJwksCache, JWKS_FETCH_BACKOFF_MS } from '#functions/authorizer/jwks-cache.ts';
import { loadAuthorizerSettings } from '#functions/authorizer/settings.ts';
import { authorizerEnvironment } from '#infra/environment.ts';
import { AuthorizerEmulation } from '#infra/local/authorizer-emulation.ts';
import { JWKS_PATH, LOCAL_AUDIENCE, localIssuerUrl } from '#infra/local/issuer.ts';
import { RequestPipeline } from '#infra/local/request-pipeline.ts';

/**
 * What the local gateway answers, as API Gateway with this stack's gateway responses would, when
 * the identity provider behind the authorizer fails: the real authorizer, its JWKS on a loopback
 * server that fails, in front of the gateway's own pipeline (`npm start`'s). Before, a valid token
 * got 401 `invalid_token` then; an authorizer error got a 500.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

interface Provider {
  /** The status the JWKS is answered with: 200 serves the key. */
  status: number;
  readonly issuer: string;
  readonly key: { readonly kid: string; readonly privateKey: CryptoKey; readonly jwk: JWK };
}

async function startProvider(status: number): Promise<Provider> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const key = {
    kid: 'idp-1',
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid: 'idp-1', alg: 'ES256' },
  };
  const server = createServer((request, response) => {
    if (request.url !== JWKS_PATH || provider.status !== 200) {
      return void response.writeHead(provider.status === 200 ? 404 : provider.status).end('down');
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.jwk] }));
  });
  const provider: Provider = { status, issuer: localIssuerUrl(await listen(server)), key };
  return provider;
}

/** The local gateway's pipeline with the authorizer of `provider`; every function answers 200. */
async function gatewayFor(provider: Provider, clock: { now: number }): Promise<string> {
  const env = authorizerEnvironment({
    issuer: provider.issuer,
    audience: LOCAL_AUDIENCE,
    jwksUrl: `${provider.issuer}${JWKS_PATH}`,
  });
  const verify = createAccessTokenVerifier(
    loadAuthorizerSettings(env),
    createJwksCache({ now: () => clock.now }),
  );
  const authorizer = new AuthorizerEmulation(300);
  const handler = createAuthorizer({ verify });
  authorizer.handler = (event, _context: Context) => handler(event);
  const pipeline = new RequestPipeline({ authorizer, integrationTimeoutMs: 1_000, binaryMediaTypes: [] });
  pipeline.setInvoker({
    invoke: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' }),
  });
  return `http://127.0.0.1:${await listen(createServer((req, res) => void pipeline.serve(req, res)))}`;
}

async function tokenOf(provider: Provider, key = provider.key): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    iss: provider.issuer,
    aud: LOCAL_AUDIENCE,
    sub: 'caller-1',
    iat: now,
    exp: now + 300,
    scope: 'read:wallet',
  })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
  return `Bearer ${token}`;
}

const balance = (base: string, authorization: string) =>
  fetch(`${base}/api/wallet/balance`, { headers: { authorization } });

describe('the local gateway, when the identity provider fails', () => {
  it.each([503, 500])(
    'answers a valid token 503 problem+json with Retry-After (JWKS %i), and caches nothing',
    async (status) => {
      const provider = await startProvider(status);
      const clock = { now: 1_000_000_000_000 };
      const base = await gatewayFor(provider, clock);
      const token = await tokenOf(provider);

      const answer = await balance(base, token);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(answer.headers.get('www-authenticate')).toBeNull();
      expect(await answer.json()).toEqual({
        type: 'urn:problem-type:wallet-catalog:temporarily-unavailable',
        title: 'Service temporarily unavailable',
        status: 503,
        detail: expect.stringContaining('Retry-After'),
        requestId: answer.headers.get('x-amzn-requestid'),
      });

      // The provider is back after the back-off: the same token is let through, no failure cached.
      provider.status = 200;
      clock.now += JWKS_FETCH_BACKOFF_MS;
      expect((await balance(base, token)).status).toBe(200);
    },
  );

  it('still answers a token signed by another key 401 invalid_token while the JWKS is healthy', async () => {
    const provider = await startProvider(200);
    const base = await gatewayFor(provider, { now: 1_000_000_000_000 });
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const forged = await balance(base, await tokenOf(provider, { ...provider.key, privateKey }));
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await balance(base, await tokenOf(provider))).status).toBe(200);
  });
});
