/**
 * The local identity provider's JWKS endpoint, the one implementation behind every place that
 * plays the identity provider: the local gateway serves {@link jwksAnswer} on its own port (the
 * issuer of `npm run token` is the gateway's base URL), while `npm run invoke` without a running
 * stack and the benchmark start {@link startJwksServer} on a free port.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONWebKeySet } from 'jose';
import { JWKS_PATH, localIssuerUrl } from './issuer.ts';

/** What a `GET` of {@link JWKS_PATH} is answered with, as an identity provider answers it. */
export interface JwksAnswer {
  readonly statusCode: 200;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The answer to a fetch of the keys, cacheable as a provider's is. */
export function jwksAnswer(publicJwks: JSONWebKeySet): JwksAnswer {
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'max-age=300' },
    body: JSON.stringify(publicJwks),
  };
}

export interface JwksServer {
  readonly port: number;
  /** The issuer (`iss`) tokens checked against these keys must name. */
  readonly issuerUrl: string;
  readonly jwksUrl: string;
  /**
   * Requests served so far: the benchmark asserts with it that cold init fetches nothing and a
   * warm authorizer fetches once.
   */
  readonly hits: () => number;
  close(): Promise<void>;
}

/** Serves `publicJwks` at {@link JWKS_PATH} on a free loopback port (anything else is 404). */
export async function startJwksServer(publicJwks: JSONWebKeySet): Promise<JwksServer> {
  const answer = jwksAnswer(publicJwks);
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    if (req.method !== 'GET' || req.url !== JWKS_PATH) {
      res.writeHead(404, { 'content-length': 0 }).end();
      return;
    }
    res
      .writeHead(answer.statusCode, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) })
      .end(answer.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    issuerUrl: localIssuerUrl(port),
    jwksUrl: `${localIssuerUrl(port)}${JWKS_PATH}`,
    hits: () => hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
