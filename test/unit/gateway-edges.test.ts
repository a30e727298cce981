import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthorizerEmulation } from '#infra/local/authorizer-emulation.ts';
import { RequestPipeline } from '#infra/local/request-pipeline.ts';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A local gateway pipeline whose functions must never be reached: these requests are the gateway's own. */
async function gatewayWith(corsAllowedOrigins?: readonly string[]): Promise<string> {
  const pipeline = new RequestPipeline({
    authorizer: new AuthorizerEmulation(0),
    integrationTimeoutMs: 1_000,
    binaryMediaTypes: [],
    corsAllowedOrigins,
  });
  pipeline.setInvoker({
    invoke: () => Promise.reject(new Error('no function should be invoked')),
  });
  server = createServer((req, res) => void pipeline.serve(req, res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the local gateway at the edges of the route table', () => {
  it('has CORS off by default: OPTIONS is a method like any other, 405 with the routes in Allow', async () => {
    const base = await gatewayWith();
    const result = await fetch(`${base}/api/v3/pet/7`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    expect(result.status).toBe(405);
    expect(result.headers.get('allow')).toBe('GET, POST, DELETE');
    expect(result.headers.get('access-control-allow-origin')).toBeNull();
    expect(await result.json()).toMatchObject({
      type: 'urn:problem-type:wallet-catalog:method-not-allowed',
      status: 405,
    });
  });

  it('answers a preflight from the configured origins, naming the caller only when listed', async () => {
    const origins = ['https://app.example.com', 'https://admin.example.com'];
    const base = await gatewayWith(origins);
    const preflight = (origin: string) =>
      fetch(`${base}/api/v3/pet`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const listed = await preflight('https://admin.example.com');
    expect(listed.status).toBe(204);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(listed.headers.get('access-control-allow-methods')).toBe('POST,PUT,OPTIONS');
    expect((await preflight('https://evil.example.net')).headers.get('access-control-allow-origin')).toBe(
      'https://app.example.com',
    );
  });

  it('answers 404, not 405, for a path no route resource matches, whatever the method', async () => {
    const base = await gatewayWith(['https://app.example.com']);
    for (const method of ['GET', 'OPTIONS', 'DELETE']) {
      const result = await fetch(`${base}/api/v3`, { method });
      expect(result.status, method).toBe(404);
      expect(result.headers.get('allow')).toBeNull();
    }
  });
});
