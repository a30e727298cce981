/**
 * One delivery attempt against real HTTP servers on loopback, verified by the npm package
 * `standardwebhooks` as a receiver would. Only loopback is ever connected to: the connect-time
 * refusal of private addresses is shown on the lookup itself (no socket), and its wiring into
 * connections by a name that resolves to loopback while deployed (which must then be refused: the
 * receiver listening there sees nothing).
 */
import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { checkedLookup, createHttpDeliver, type Resolver } from '#shared/webhooks/delivery/http-delivery.ts';
import type { WebhookMessage } from '#shared/webhooks/model/delivery.ts';
import { newSigningSecret } from '#shared/webhooks/secrets/signing-secret.ts';

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A receiver on 127.0.0.1 answering with `answer`; every request it got, in order. */
async function receiver(answer: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void) {
  const received: Received[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ headers: req.headers, body });
      answer(req, res, body);
    });
  });
  server.on('connection', (socket) => {
    connections++;
    socket.unref();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { port, received, connections: () => connections, url: `http://127.0.0.1:${port}/hooks` };
}

/**
 * A receiver on 127.0.0.1 that answers with raw bytes, `onRequest(socket)` once the request's first
 * bytes arrive: for answers no HTTP server library writes.
 */
async function rawReceiver(onRequest: (socket: Socket) => void): Promise<string> {
  const server = createNetServer((socket) => {
    socket.once('data', () => onRequest(socket));
    socket.on('error', () => {});
    socket.unref();
  });
  servers.push(server as unknown as Server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

const message = (
  body = '{"type":"transfer.received","timestamp":"2026-01-01T00:00:00.000Z","data":{"amount":12.34}}',
): WebhookMessage => ({
  id: `evt_${crypto.randomUUID()}`,
  body,
});

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

const resolverOf =
  (answers: Record<string, readonly LookupAddress[]>, asked: string[] = []): Resolver =>
  async (hostname) => {
    asked.push(hostname);
    const found = answers[hostname];
    if (!found) throw Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };

describe('a delivery attempt', () => {
  it('sends the exact bytes with Standard Webhooks headers that standardwebhooks verifies', async () => {
    const rx = await receiver((_req, res) => res.writeHead(204).end());
    const secret = newSigningSecret();
    // Spacing, key order and a non-ASCII character a re-serialisation would change.
    const sent = message('{"type":"transfer.received",  "data":{"note":"café","amount":12.30}}');
    const result = await createHttpDeliver({ mode: 'local' })(
      { endpointId: 'e', url: rx.url, secrets: [secret] },
      sent,
    );
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
    const [got] = rx.received;
    if (!got) throw new Error('nothing received');
    expect(got.body.equals(Buffer.from(sent.body, 'utf8'))).toBe(true);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(sent.id);
    expect(new Webhook(secret).verify(got.body.toString('utf8'), headersOf(got))).toEqual(
      JSON.parse(sent.body),
    );
    expect(() => new Webhook(newSigningSecret()).verify(got.body.toString('utf8'), headersOf(got))).toThrow();
  });

  it('signs with every current secret, so that the old and the new one both verify', async () => {
    const rx = await receiver((_req, res) => res.writeHead(200).end('ok'));
    const [next, old] = [newSigningSecret(), newSigningSecret()];
    const sent = message();
    await createHttpDeliver({ mode: 'local' })({ endpointId: 'e', url: rx.url, secrets: [next, old] }, sent);
    const [got] = rx.received;
    if (!got) throw new Error('nothing received');
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [next, old]) {
      expect(new Webhook(secret).verify(got.body.toString('utf8'), headersOf(got))).toEqual(
        JSON.parse(sent.body),
      );
    }
  });

  it("stamps each attempt with the attempt's own time and keeps the event id", async () => {
    const rx = await receiver((_req, res) => res.writeHead(500).end());
    const sent = message();
    const times = [Date.parse('2026-03-01T10:00:00Z'), Date.parse('2026-03-01T12:00:00Z')];
    for (const now of times) {
      await createHttpDeliver({ mode: 'local', now: () => now })(
        { endpointId: 'e', url: rx.url, secrets: [newSigningSecret()] },
        sent,
      );
    }
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([sent.id, sent.id]);
    expect(rx.received.map((r) => Number(r.headers['webhook-timestamp']))).toEqual(
      times.map((t) => t / 1000),
    );
  });

  it('does not follow a redirect: a 3xx is a failed attempt, and the target is never asked', async () => {
    const target = await receiver((_req, res) => res.writeHead(200).end());
    const rx = await receiver((_req, res) => res.writeHead(307, { location: target.url }).end());
    const result = await createHttpDeliver({ mode: 'local' })(
      { endpointId: 'e', url: rx.url, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'retry', statusCode: 307, errorClass: 'redirect' });
    expect(target.received).toHaveLength(0);
  });

  it('tells a 410 Gone apart: the endpoint is to be disabled', async () => {
    const rx = await receiver((_req, res) => res.writeHead(410).end());
    const result = await createHttpDeliver({ mode: 'local' })(
      { endpointId: 'e', url: rx.url, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'gone', statusCode: 410 });
  });

  it.each([429, 502, 503, 504])(
    'honours the Retry-After of a %i, in seconds or as a date',
    async (status) => {
      const now = Date.parse('2026-03-01T10:00:00Z');
      const seconds = await receiver((_req, res) => res.writeHead(status, { 'retry-after': '120' }).end());
      const date = await receiver((_req, res) =>
        res.writeHead(status, { 'retry-after': new Date(now + 30_000).toUTCString() }).end(),
      );
      const deliver = createHttpDeliver({ mode: 'local', now: () => now });
      const target = (url: string) => ({ endpointId: 'e', url, secrets: [newSigningSecret()] });
      expect(await deliver(target(seconds.url), message())).toMatchObject({
        outcome: 'retry',
        statusCode: status,
        retryAfterMs: 120_000,
      });
      expect(await deliver(target(date.url), message())).toMatchObject({
        outcome: 'retry',
        retryAfterMs: 30_000,
      });
    },
  );

  it('ignores the Retry-After of a status that does not ask to slow down', async () => {
    const rx = await receiver((_req, res) => res.writeHead(500, { 'retry-after': '120' }).end());
    const result = await createHttpDeliver({ mode: 'local' })(
      { endpointId: 'e', url: rx.url, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'retry', statusCode: 500, errorClass: 'http-status' });
    expect(result.retryAfterMs).toBeUndefined();
  });

  it('reads at most a few KB of the answer and hangs up on the rest', async () => {
    let wrote = 0;
    let closedEarly: (early: boolean) => void = () => {};
    const closed = new Promise<boolean>((resolve) => {
      closedEarly = resolve;
    });
    const rx = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const more = () => {
        // 64 MB would take a while to read; the client must hang up long before.
        while (wrote < 64 * 1024 * 1024) {
          wrote += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => closedEarly(!res.writableFinished));
      more();
    });
    const result = await createHttpDeliver({ mode: 'local' })(
      { endpointId: 'e', url: rx.url, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 200 });
    expect(await closed).toBe(true);
    expect(wrote).toBeLessThan(64 * 1024 * 1024);
  });

  it('ends an attempt answered 101 Switching Protocols as a failure, within the timeout', async () => {
    const url = await rawReceiver((socket) =>
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'),
    );
    const attempt = createHttpDeliver({ mode: 'local', timeoutMs: 300 })(
      { endpointId: 'e', url, secrets: [newSigningSecret()] },
      message(),
    );
    const late = new Promise((resolve) => setTimeout(() => resolve('still pending'), 3_000));
    expect(await Promise.race([attempt, late])).toMatchObject({ outcome: 'retry' });
  });

  it('reads at most a few KB of informational (1xx) answers too, and hangs up on the rest', async () => {
    let wrote = 0;
    const url = await rawReceiver((socket) => {
      const hint = Buffer.from(`HTTP/1.1 103 Early Hints\r\nLink: <${'x'.repeat(1000)}>\r\n\r\n`);
      const more = () => {
        while (!socket.destroyed && wrote < 64 * 1024 * 1024) {
          wrote += hint.length;
          if (!socket.write(hint)) return void socket.once('drain', more);
        }
      };
      more();
    });
    // A timeout far off: the attempt must end on the limit (a connection failure), not on it.
    const result = await createHttpDeliver({ mode: 'local', timeoutMs: 15_000 })(
      { endpointId: 'e', url, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'retry', errorClass: 'connection' });
    expect(wrote).toBeLessThan(64 * 1024 * 1024);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const rx = await receiver(() => {
      // Never answers.
    });
    const result = await createHttpDeliver({ mode: 'local', timeoutMs: 200 })(
      { endpointId: 'e', url: rx.url, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'retry', errorClass: 'timeout' });
    expect(result.statusCode).toBeUndefined();
  });

  it("asks an endpoint beside sixteen of another endpoint's attempts still waiting on the same host", async () => {
    // A platform many merchants receive on: one host, many endpoints. The dispatcher's caps bound
    // the attempts per endpoint; a socket pool per host (16, as first built) kept the others
    // queued behind those, and the wait ran down their own timeout. The receiver answers the
    // sixteen only once it has been asked by the other endpoint.
    const held: ServerResponse[] = [];
    const rx = await receiver((req, res) => {
      if (req.url?.startsWith('/slow')) {
        held.push(res);
        return;
      }
      res.writeHead(204).end();
      for (const waiting of held.splice(0)) waiting.writeHead(204).end();
    });
    const deliver = createHttpDeliver({ mode: 'local', timeoutMs: 1_000 });
    const target = (path: string) => ({
      endpointId: path,
      url: `http://127.0.0.1:${rx.port}${path}`,
      secrets: [newSigningSecret()],
    });
    const slow = Array.from({ length: 16 }, (_, n) => deliver(target(`/slow/${n % 4}`), message()));
    while (held.length < 16) await new Promise((r) => setTimeout(r, 5));
    expect(await deliver(target('/other'), message())).toMatchObject({ outcome: 'delivered' });
    // With one pool of 16, the other was asked only once these had timed out.
    for (const result of await Promise.all(slow)) expect(result).toMatchObject({ outcome: 'delivered' });
  });

  it('reports a refused connection as a connection failure', async () => {
    const rx = await receiver((_req, res) => res.end());
    const url = rx.url;
    await new Promise((r) => servers.pop()?.close(r));
    const result = await createHttpDeliver({ mode: 'local' })(
      { endpointId: 'e', url, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'retry', errorClass: 'connection' });
  });

  it('resolves a name with the resolver it is given, at connect time', async () => {
    const rx = await receiver((_req, res) => res.writeHead(200).end());
    const asked: string[] = [];
    const resolve = resolverOf({ localhost: [{ address: '127.0.0.1', family: 4 }] }, asked);
    const result = await createHttpDeliver({ mode: 'local', resolve })(
      { endpointId: 'e', url: `http://localhost:${rx.port}/hooks`, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'delivered' });
    expect(asked).toEqual(['localhost']);
    expect(rx.received[0]?.headers.host).toBe(`localhost:${rx.port}`);
  });

  it('refuses, deployed, a name that resolves to loopback now (DNS rebinding): nothing reaches it', async () => {
    const rx = await receiver((_req, res) => res.writeHead(200).end());
    const resolve = resolverOf({ 'merchant.example': [{ address: '127.0.0.1', family: 4 }] });
    const result = await createHttpDeliver({ mode: 'deployed', resolve })(
      { endpointId: 'e', url: `https://merchant.example:${rx.port}/hooks`, secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'refused-address', errorClass: 'refused-address' });
    expect(rx.connections()).toBe(0);
  });

  it('refuses a literal private address before any lookup or connection', async () => {
    const asked: string[] = [];
    const deliver = createHttpDeliver({ mode: 'deployed', resolve: resolverOf({}, asked) });
    for (const url of [
      'https://10.0.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::ffff:a00:1]/',
    ]) {
      expect(await deliver({ endpointId: 'e', url, secrets: [newSigningSecret()] }, message())).toMatchObject(
        {
          outcome: 'refused-address',
        },
      );
    }
    expect(asked).toEqual([]);
  });

  it('reports a name that does not resolve as a DNS failure', async () => {
    const deliver = createHttpDeliver({ mode: 'deployed', resolve: resolverOf({}) });
    const result = await deliver(
      { endpointId: 'e', url: 'https://nowhere.example/', secrets: [newSigningSecret()] },
      message(),
    );
    expect(result).toMatchObject({ outcome: 'retry', errorClass: 'dns' });
  });
});

/** The connect-time check alone: the lookup a connection would use, called without any socket. */
describe('the lookup every connection makes', () => {
  const lookUp = (answers: readonly LookupAddress[], mode: 'deployed' | 'local', all = true) =>
    new Promise<{ error: NodeJS.ErrnoException | null; addresses: unknown }>((resolve) => {
      checkedLookup(resolverOf({ 'merchant.example': answers }), mode)(
        'merchant.example',
        { all },
        (error: NodeJS.ErrnoException | null, addresses: unknown) => resolve({ error, addresses }),
      );
    });

  it.each([
    ['a private address', '10.0.0.1', 4],
    ['the metadata service', '169.254.169.254', 4],
    ['a CGNAT address', '100.64.0.1', 4],
    ['loopback', '127.0.0.1', 4],
    ['an IPv4-mapped private address', '::ffff:10.0.0.1', 6],
    ['an IPv6 unique-local address', 'fd00::1', 6],
    ['an IPv6 link-local address', 'fe80::1', 6],
    ['the unspecified address', '0.0.0.0', 4],
    ['a multicast address', '224.0.0.1', 4],
  ] as const)('fails the connection of a name resolving to %s', async (_what, address, family) => {
    const { error } = await lookUp([{ address, family }], 'deployed');
    expect(error?.code).toBe('EWEBHOOKADDRESS');
  });

  it('fails a name whose answer mixes a public and a private address', async () => {
    const { error } = await lookUp(
      [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
      'deployed',
    );
    expect(error?.code).toBe('EWEBHOOKADDRESS');
  });

  it('passes the addresses of a public name on, all of them or the first', async () => {
    const answers = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ];
    expect(await lookUp(answers, 'deployed')).toEqual({ error: null, addresses: answers });
    const one = await new Promise((resolve) =>
      checkedLookup(resolverOf({ 'merchant.example': answers }), 'deployed')(
        'merchant.example',
        { family: 6 },
        (e, a, f) => resolve([e, a, f]),
      ),
    );
    expect(one).toEqual([null, '2606:2800:220:1::1', 6]);
  });

  it('lets loopback through locally, and still nothing private', async () => {
    expect((await lookUp([{ address: '127.0.0.1', family: 4 }], 'local')).error).toBeNull();
    expect((await lookUp([{ address: '10.0.0.1', family: 4 }], 'local')).error?.code).toBe('EWEBHOOKADDRESS');
  });
});
