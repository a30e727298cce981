import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONWebKeySet } from 'jose';
import { JWKS_PATH } from '#infra/local/issuer.ts';

export interface JwksServer {
  readonly port: number;
  readonly jwksUrl: string;
  /** Requests served so far: how the benchmark sees when the authorizer fetched its keys. */
  readonly hits: () => number;
  close(): Promise<void>;
}

/**
 * Serves the issuer's public keys on loopback, as the identity provider would, counting requests:
 * cold init must fetch nothing, and a warm authorizer must fetch once and then use its cache.
 */
export async function startJwksServer(jwks: JSONWebKeySet): Promise<JwksServer> {
  let hits = 0;
  const body = JSON.stringify(jwks);
  const server: Server = createServer((req, res) => {
    hits++;
    if (req.url !== JWKS_PATH) {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'max-age=300' })
      .end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    jwksUrl: `http://127.0.0.1:${port}${JWKS_PATH}`,
    hits: () => hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
