import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localResources } from '#infra/local/invoke/local-resources.ts';
import type { TemplateFunction } from '#infra/local/invoke/template.ts';
import { JWKS_PATH, loadOrCreateLocalKeys, localIssuerUrl, signLocalToken } from '#infra/local/issuer.ts';
import { startJwksServer } from '#infra/local/jwks-server.ts';

let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'wallet-catalog-jwks-'));
});

afterAll(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

describe('the local JWKS server', () => {
  it('serves the public keys at the JWKS path only, as a provider does, and counts every request', async () => {
    const { publicJwks } = await loadOrCreateLocalKeys(stateDir);
    const server = await startJwksServer(publicJwks);
    try {
      expect(server.issuerUrl).toBe(localIssuerUrl(server.port));
      expect(server.jwksUrl).toBe(`${server.issuerUrl}${JWKS_PATH}`);
      const keys = await fetch(server.jwksUrl);
      expect(keys.status).toBe(200);
      expect(keys.headers.get('content-type')).toBe('application/jwk-set+json');
      expect(await keys.json()).toEqual(publicJwks);
      const elsewhere = await fetch(`${server.issuerUrl}/jwks.json`);
      expect(elsewhere.status).toBe(404);
      await elsewhere.arrayBuffer();
      expect(server.hits()).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('is the identity provider of `npm run invoke` without a running stack, and stops with it', async () => {
    const authorizer: TemplateFunction = {
      logicalId: 'Authorizer',
      name: 'authorizer',
      handler: 'index.handler',
      runtime: 'nodejs24.x',
      memorySizeMb: 1024,
      timeoutSeconds: 10,
      environment: {
        AUTH_ISSUER: 'https://idp.example.com',
        AUTH_AUDIENCE: 'wallet-catalog-api',
        AUTH_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
      },
      assetDir: stateDir,
    };
    // No `npm start` stack has written its record under this state directory.
    const local = await localResources(authorizer, { port: 3000, stateDir });
    const jwksUrl = local.env.AUTH_JWKS_URL as string;
    try {
      expect(local.source).toContain("the local issuer's keys");
      const token = await signLocalToken({ sub: 'alice', port: local.issuerPort, stateDir });
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(jwksUrl)), {
        issuer: local.env.AUTH_ISSUER,
        audience: local.env.AUTH_AUDIENCE,
      });
      expect(payload.sub).toBe('alice');
    } finally {
      await local.close();
    }
    await expect(fetch(jwksUrl)).rejects.toThrow();
  });
});
