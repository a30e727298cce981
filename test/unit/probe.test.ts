import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE_PATHS, type ProbeTarget, runProbe } from '#functions/probe/probe.ts';

/** What the fake API and identity provider answer; each test sets its own. */
interface Behaviour {
  openapi: { status: number; body: string };
  token: (req: IncomingMessage, body: string) => { status: number; body: string };
  read: (req: IncomingMessage) => number;
}

const CLIENT_ID = 'probe-client';
const CLIENT_SECRET = 'sécret:with/odd+chars';
const TOKEN = 'header.payload.signature';

const good: Behaviour = {
  openapi: { status: 200, body: JSON.stringify({ openapi: '3.1.0' }) },
  token: (req, body) => {
    const expected = `Basic ${Buffer.from(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`).toString('base64')}`;
    const form = new URLSearchParams(body);
    const ok =
      req.headers.authorization === expected &&
      form.get('grant_type') === 'client_credentials' &&
      form.get('scope') === 'read:wallet';
    return ok
      ? { status: 200, body: JSON.stringify({ access_token: TOKEN, token_type: 'Bearer' }) }
      : { status: 401, body: '{"error":"invalid_client"}' };
  },
  read: (req) => (req.headers.authorization === `Bearer ${TOKEN}` ? 200 : 401),
};

let behaviour: Behaviour = good;
let server: Server;
let base: string;

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let body = '';
  for await (const chunk of req) body += chunk;
  const path = req.url ?? '';
  if (path === `/dev/${PROBE_PATHS.openapi}`) {
    res
      .writeHead(behaviour.openapi.status, { 'content-type': 'application/json' })
      .end(behaviour.openapi.body);
  } else if (path === '/oauth2/token' && req.method === 'POST') {
    const answer = behaviour.token(req, body);
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  } else if (path === `/dev/${PROBE_PATHS.authorizedRead}`) {
    res.writeHead(behaviour.read(req), { 'content-type': 'application/json' }).end('{}');
  } else {
    res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const target = (): ProbeTarget => ({
  apiUrl: `${base}/dev/`,
  tokenUrl: `${base}/oauth2/token`,
  scope: 'read:wallet',
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  timeoutMs: 2_000,
});

const verdicts = (results: Awaited<ReturnType<typeof runProbe>>) =>
  Object.fromEntries(results.map((r) => [r.check, r.ok]));

describe('synthetic probe', () => {
  it('passes when the public route, the token endpoint and the authorized read all answer as a client expects', async () => {
    behaviour = good;
    expect(verdicts(await runProbe(target()))).toEqual({
      openapi: true,
      token: true,
      'authorized-read': true,
    });
  });

  it('fails the public check when the OpenAPI route answers anything but the document', async () => {
    behaviour = { ...good, openapi: { status: 502, body: '<html>bad gateway</html>' } };
    const results = await runProbe(target());
    expect(verdicts(results)).toEqual({ openapi: false, token: true, 'authorized-read': true });
    expect(results[0]?.status).toBe(502);
  });

  it('fails the token check and skips the read when the identity provider refuses the client', async () => {
    behaviour = { ...good, token: () => ({ status: 401, body: '{"error":"invalid_client"}' }) };
    const results = await runProbe(target());
    expect(verdicts(results)).toEqual({ openapi: true, token: false, 'authorized-read': false });
    expect(results.find((r) => r.check === 'authorized-read')?.detail).toBe('no token');
  });

  it('fails the authorized read when the API rejects the token or fails', async () => {
    for (const status of [401, 403, 503]) {
      behaviour = { ...good, read: () => status };
      const results = await runProbe(target());
      expect(verdicts(results)['authorized-read']).toBe(false);
      expect(results.find((r) => r.check === 'authorized-read')?.status).toBe(status);
    }
  });

  it('reports an unreachable API as failed checks, never as a thrown error, and names no secret', async () => {
    behaviour = good;
    const results = await runProbe({ ...target(), apiUrl: 'http://127.0.0.1:9/dev/' });
    expect(verdicts(results)).toEqual({ openapi: false, token: true, 'authorized-read': false });
    expect(JSON.stringify(results)).not.toContain(CLIENT_SECRET);
    expect(JSON.stringify(results)).not.toContain(TOKEN);
  });
});
