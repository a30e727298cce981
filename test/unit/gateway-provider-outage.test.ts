import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthorizer } from '#functions/authorizer/authorizer.ts';
import { JWKS_FETCH_BACKOFF_MS } from '#functions/authorizer/jwks-cache.ts';
import { AuthorizerEmulation } from '#infra/local/authorizer-emulation.ts';
import { RequestPipeline } from '#infra/local/request-pipeline.ts';
import {
  bearer,
  closeIdentityProviders,
  type IdentityProvider,
  jwksOf,
  newSigningKey,
  startIdentityProvider,
  verifierOf,
} from '../support/identity-provider.ts';

/**
 * What the local gateway answers, as API Gateway with this stack's gateway responses would, when
 * the identity provider behind the authorizer fails: the real authorizer, its JWKS on a loopback
 * server that fails, in front of the gateway's own pipeline (`npm start`'s). Before, a valid token
 * got 401 `invalid_token` then; an authorizer error got a 500.
 */

const servers: Server[] = [];
afterEach(closeIdentityProviders);
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

/** The local gateway's pipeline with the authorizer of `provider`; every function answers 200. */
async function gatewayFor(provider: IdentityProvider, clock: { now: number }): Promise<string> {
  const verify = verifierOf(provider, clock);
  const authorizer = new AuthorizerEmulation(300);
  const handler = createAuthorizer({ verify });
  authorizer.handler = (event, _context: Context) => handler(event);
  const pipeline = new RequestPipeline({ authorizer, integrationTimeoutMs: 1_000, binaryMediaTypes: [] });
  pipeline.setInvoker({
    invoke: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' }),
  });
  return `http://127.0.0.1:${await listen(createServer((req, res) => void pipeline.serve(req, res)))}`;
}

const balance = (base: string, authorization: string) =>
  fetch(`${base}/api/wallet/balance`, { headers: { authorization } });

describe('the local gateway, when the identity provider fails', () => {
  it.each([503, 500])(
    'answers a valid token 503 problem+json with Retry-After (JWKS %i), and caches nothing',
    async (status) => {
      const key = await newSigningKey('idp-1');
      const provider = await startIdentityProvider({ status, body: 'down' });
      const clock = { now: 1_000_000_000_000 };
      const base = await gatewayFor(provider, clock);
      const token = await bearer(provider, key, { scope: 'read:wallet' });

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
      provider.answer = jwksOf(key);
      clock.now += JWKS_FETCH_BACKOFF_MS;
      expect((await balance(base, token)).status).toBe(200);
    },
  );

  it('still answers a token signed by another key 401 invalid_token while the JWKS is healthy', async () => {
    const key = await newSigningKey('idp-1');
    const provider = await startIdentityProvider(jwksOf(key));
    const base = await gatewayFor(provider, { now: 1_000_000_000_000 });
    const { privateKey } = await newSigningKey('idp-1');
    const forged = await balance(
      base,
      await bearer(provider, { ...key, privateKey }, { scope: 'read:wallet' }),
    );
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await balance(base, await bearer(provider, key, { scope: 'read:wallet' }))).status).toBe(200);
  });
});
