import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { createAccessTokenVerifier } from '#functions/authorizer/access-token.ts';
import { createAuthorizer } from '#functions/authorizer/authorizer.ts';
import { createJwksCache } from '#functions/authorizer/jwks-cache.ts';
import { loadAuthorizerSettings } from '#functions/authorizer/settings.ts';
import { authorizerEnvironment } from '#infra/environment.ts';
import { JWKS_PATH, LOCAL_AUDIENCE, localIssuerUrl } from '#infra/local/issuer.ts';

/*
 * An identity provider on loopback whose JWKS answer each test sets (keys, a failure, or nothing
 * at all), for the authorizer's tests of key withdrawal and of the provider's outages.
 */

/** A signing key of the provider: its private half, and the public JWK its JWKS publishes. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

export async function newSigningKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** What the provider answers a fetch of its JWKS with; `hang` answers nothing, ever. */
export type JwksAnswer = { readonly status: number; readonly body: string } | 'hang';

/** A JWKS of these keys (or raw JWKs, such as malformed ones). */
export const jwksOf = (...keys: readonly (SigningKey | JWK)[]): JwksAnswer => ({
  status: 200,
  body: JSON.stringify({ keys: keys.map((key) => ('jwk' in key ? key.jwk : key)) }),
});

/** The provider down. */
export const JWKS_DOWN: JwksAnswer = { status: 503, body: 'down' };

export interface IdentityProvider {
  answer: JwksAnswer;
  /** Fetches of its JWKS so far. */
  fetches: number;
  readonly issuer: string;
  readonly jwksUrl: string;
  close(): Promise<void>;
}

const running = new Set<IdentityProvider>();

/** Closes every provider still running: a test file's afterEach. */
export async function closeIdentityProviders(): Promise<void> {
  for (const provider of [...running]) await provider.close();
}

export async function startIdentityProvider(answer: JwksAnswer): Promise<IdentityProvider> {
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
  const provider: IdentityProvider = {
    answer,
    fetches: 0,
    issuer,
    jwksUrl: `${issuer}${JWKS_PATH}`,
    close: async () => {
      running.delete(provider);
      server.closeAllConnections();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
  running.add(provider);
  return provider;
}

/** The authorizer's verifier as a cold start builds it, its JWKS cache on `clock` (the real one by default). */
export function verifierOf(provider: IdentityProvider, clock?: { now: number }) {
  const env = authorizerEnvironment({
    issuer: provider.issuer,
    audience: LOCAL_AUDIENCE,
    jwksUrl: provider.jwksUrl,
  });
  const cache = createJwksCache(clock === undefined ? {} : { now: () => clock.now });
  return createAccessTokenVerifier(loadAuthorizerSettings(env), cache);
}

/** The authorizer of `provider` for requests to `methodArn`: given an Authorization header, its answer. */
export function authorizerOn(provider: IdentityProvider, methodArn: string, clock?: { now: number }) {
  const authorizer = createAuthorizer({ verify: verifierOf(provider, clock) });
  return (authorization: string): Promise<APIGatewayAuthorizerResult> =>
    authorizer({ type: 'TOKEN', methodArn, authorizationToken: authorization });
}

/** `Bearer` and a well-signed, current access token of `provider`, with `claims` over the good ones. */
export async function bearer(
  provider: IdentityProvider,
  key: SigningKey,
  claims: Record<string, unknown> = {},
): Promise<string> {
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
