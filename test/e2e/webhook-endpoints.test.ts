/**
 * Webhook endpoints through the local gateway: real tokens, authorizer and handlers, DynamoDB
 * Local. Every route is tried with another wallet's endpoint (404), without its scope (403), and
 * with each bound broken (422); the URL refusals name literal addresses only, so no request is
 * ever made to them.
 */
import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { type CallResult, call, expectProblem, tokenFor } from './http.ts';

const BOTH = 'read:webhooks write:webhooks read:wallet';
const ALL_TYPES = ['transfer.sent', 'transfer.received', 'transfer.completed', 'deposit.received'];

async function merchant(scope = BOTH) {
  const sub = uniqueSub('merchant');
  return { sub, token: await tokenFor(scope, { sub }) };
}

const register = (token: string, json: unknown) => call('POST', '/api/wallet/webhooks', { token, json });

async function registered(token: string, json: Record<string, unknown> = {}) {
  const created = await register(token, { url: 'https://merchant.example.com/hooks', ...json });
  expect(created.status, created.text).toBe(201);
  return created.json as { id: string; secret: string } & Record<string, unknown>;
}

const violationsOf = (result: CallResult) => {
  const problem = expectProblem(result, 422);
  return problem.errors as { pointer: string; detail: string }[] | undefined;
};

describe('POST /api/wallet/webhooks', () => {
  it('registers an endpoint for every type when none are named, and shows its secret once', async () => {
    const { token } = await merchant();
    const created = await register(token, { url: 'https://merchant.example.com/hooks?shop=1' });
    expect(created.status).toBe(201);
    const body = created.json as Record<string, unknown>;
    expect(body).toMatchObject({
      id: expect.stringMatching(/^whep_[A-Za-z0-9_-]{22}$/),
      url: 'https://merchant.example.com/hooks?shop=1',
      eventTypes: ALL_TYPES,
      description: '',
      status: 'enabled',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(String(body.secret).slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(created.headers.get('location')).toBe(`webhooks/${body.id}`);
    expect(created.headers.get('cache-control')).toBe('no-store');

    const one = await call('GET', `/api/wallet/webhooks/${body.id}`, { token });
    expect(one.status).toBe(200);
    const { secret: _secret, ...withoutSecret } = body;
    expect(one.json).toEqual(withoutSecret);
    expect(one.text).not.toContain(String(body.secret));
    const list = await call('GET', '/api/wallet/webhooks', { token });
    expect(list.json).toEqual({ items: [withoutSecret] });
    expect(list.text).not.toContain('whsec_');
  });

  it('with an Idempotency-Key, a retry registers nothing more: 409 naming the endpoint, as documented; another body 422', async () => {
    const { token } = await merchant();
    const json = { url: 'https://merchant.example.com/hooks', eventTypes: ['transfer.received'] };
    const headers = { 'idempotency-key': `register-${uniqueSub()}` };
    const created = await call('POST', '/api/wallet/webhooks', { token, json, headers });
    expect(created.status, created.text).toBe(201);
    const { id } = created.json as { id: string };
    const again = await call('POST', '/api/wallet/webhooks', { token, json, headers });
    const problem = expectProblem(again, 409);
    expect(problem).toMatchObject({
      type: 'urn:problem-type:wallet-catalog:webhook-endpoint-registered',
      endpointId: id,
    });
    expect(again.headers.get('location')).toBe(`webhooks/${id}`);
    expect(again.text).not.toContain('whsec_');
    const other = await call('POST', '/api/wallet/webhooks', {
      token,
      json: { ...json, description: 'another' },
      headers,
    });
    expect(expectProblem(other, 422).type).toBe('urn:problem-type:wallet-catalog:idempotency-key-reused');
    const list = await call('GET', '/api/wallet/webhooks', { token });
    expect((list.json as { items: { id: string }[] }).items.map((e) => e.id)).toEqual([id]);
  });

  it('keeps the event types named, once each, and the description', async () => {
    const { token } = await merchant();
    const body = await registered(token, {
      eventTypes: ['transfer.completed', 'transfer.received', 'transfer.completed'],
      description: 'Shop #1 — fulfilment',
    });
    expect(body).toMatchObject({
      eventTypes: ['transfer.received', 'transfer.completed'],
      description: 'Shop #1 — fulfilment',
    });
  });

  it('takes http to loopback under the local stack, as npm start does', async () => {
    const { token } = await merchant();
    for (const url of ['http://127.0.0.1:9/hooks', 'http://localhost:9/hooks', 'http://[::1]:9/hooks']) {
      expect((await register(token, { url })).status).toBe(201);
    }
  });

  it.each([
    ['http to a public host', 'http://merchant.example.com/hooks'],
    ['a private address (RFC 1918)', 'https://10.0.0.1/hooks'],
    ['a private address (RFC 1918)', 'https://192.168.1.20/hooks'],
    ['a private address (RFC 1918)', 'https://172.16.0.1/hooks'],
    ['a link-local address (the metadata service)', 'https://169.254.169.254/latest/meta-data/'],
    ['a CGNAT address', 'https://100.64.0.1/'],
    ['a multicast address', 'https://224.0.0.251/'],
    ['the unspecified address', 'https://0.0.0.0/'],
    ['the unspecified IPv6 address', 'https://[::]/'],
    ['an IPv6 unique-local address', 'https://[fd00::1]/'],
    ['an IPv6 link-local address', 'https://[fe80::1]/'],
    ['an IPv4-mapped private address', 'https://[::ffff:10.0.0.1]/'],
    ['an IPv4-mapped link-local address', 'https://[::ffff:169.254.169.254]/'],
    ['an IPv4 address written as one number', 'https://2852039166/'],
    ['credentials', 'https://user:secret@merchant.example.com/'],
    ['a relative URL', '/hooks'],
  ])('refuses %s: %s', async (_what, url) => {
    const { token } = await merchant();
    const violations = violationsOf(await register(token, { url }));
    expect(violations?.[0]?.pointer).toBe('/url');
    expect((await call('GET', '/api/wallet/webhooks', { token })).json).toEqual({ items: [] });
  });

  it('refuses a url past 2,048 characters, a description past 256, an unknown or empty event type list and other members', async () => {
    const { token } = await merchant();
    const base = 'https://merchant.example.com/';
    expect((await register(token, { url: base + 'a'.repeat(2048 - base.length) })).status).toBe(201);
    const cases: [unknown, string][] = [
      [{ url: base + 'a'.repeat(2049 - base.length) }, '/url'],
      [{ url: base, description: 'd'.repeat(257) }, '/description'],
      [{ url: base, description: 'line\nbreak' }, '/description'],
      [{ url: base, description: 'invoice\u202Efdp.exe' }, '/description'],
      [{ url: base, description: 'next line\u0085' }, '/description'],
      [{ url: base, eventTypes: ['transfer.refunded'] }, '/eventTypes/0'],
      [{ url: base, eventTypes: [] }, '/eventTypes'],
      [{ url: base, eventTypes: [...ALL_TYPES, 'transfer.sent'] }, '/eventTypes'],
      [{ url: base, secret: 'whsec_mine' }, '/secret'],
      [{ description: 'no url' }, '/url'],
    ];
    for (const [json, pointer] of cases) {
      const violations = violationsOf(await register(token, json));
      expect(violations?.map((v) => v.pointer)).toContain(pointer);
    }
    expect(
      ((await call('GET', '/api/wallet/webhooks', { token })).json as { items: unknown[] }).items,
    ).toHaveLength(1);
    expect((await register(token, { url: base, description: 'd'.repeat(256) })).status).toBe(201);
  });

  it('refuses an eleventh endpoint of a wallet, and takes one again after a delete', async () => {
    const { token } = await merchant();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await registered(token, { description: `n${i}` })).id);
    const refused = expectProblem(await register(token, { url: 'https://merchant.example.com/11' }), 422);
    expect(refused.type).toMatch(/webhook-endpoint-limit$/);
    const list = (await call('GET', '/api/wallet/webhooks', { token })).json as { items: { id: string }[] };
    expect(list.items.map((e) => e.id)).toEqual([...ids].reverse());
    expect((await call('DELETE', `/api/wallet/webhooks/${ids[0]}`, { token })).status).toBe(204);
    expect((await register(token, { url: 'https://merchant.example.com/11' })).status).toBe(201);
  });

  it("counts another wallet's endpoints apart", async () => {
    const a = await merchant();
    const b = await merchant();
    for (let i = 0; i < 10; i++) await registered(a.token);
    expect((await register(b.token, { url: 'https://merchant.example.com/' })).status).toBe(201);
  });

  it('answers 401 without a token and 403 without write:webhooks', async () => {
    expectProblem(await call('POST', '/api/wallet/webhooks', { json: { url: 'https://m.example/' } }), 401);
    const { token } = await merchant('read:webhooks read:wallet write:wallet');
    expectProblem(await register(token, { url: 'https://merchant.example.com/' }), 403);
  });
});

describe('PATCH /api/wallet/webhooks/{webhookId}', () => {
  const patch = (token: string, id: string, json: unknown, contentType = 'application/merge-patch+json') =>
    call('PATCH', `/api/wallet/webhooks/${id}`, {
      token,
      body: JSON.stringify(json),
      headers: { 'content-type': contentType },
    });

  it('merges the patch: members left out stay, description null empties it', async () => {
    const { token } = await merchant();
    const { id } = await registered(token, { description: 'first', eventTypes: ['transfer.received'] });
    const changed = await patch(token, id, { url: 'https://merchant.example.com/v2', description: null });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({
      url: 'https://merchant.example.com/v2',
      description: '',
      eventTypes: ['transfer.received'],
      status: 'enabled',
    });
    const types = await patch(token, id, { eventTypes: ['deposit.received'] }, 'application/json');
    expect(types.json).toMatchObject({
      url: 'https://merchant.example.com/v2',
      eventTypes: ['deposit.received'],
    });
    expect((await call('GET', `/api/wallet/webhooks/${id}`, { token })).json).toEqual(types.json);
  });

  it('disables and enables the endpoint, saying why it is disabled', async () => {
    const { token } = await merchant();
    const { id } = await registered(token);
    expect((await patch(token, id, { status: 'disabled' })).json).toMatchObject({
      status: 'disabled',
      disabledReason: 'manual',
    });
    const enabled = (await patch(token, id, { status: 'enabled' })).json as Record<string, unknown>;
    expect(enabled.status).toBe('enabled');
    expect(enabled).not.toHaveProperty('disabledReason');
  });

  it('refuses a private address, null for a member that cannot be removed, and unknown members, changing nothing', async () => {
    const { token } = await merchant();
    const before = await registered(token);
    const { secret: _secret, ...view } = before;
    for (const [json, pointer] of [
      [{ url: 'https://169.254.169.254/' }, '/url'],
      [{ url: null }, '/url'],
      [{ eventTypes: null }, '/eventTypes'],
      [{ status: 'paused' }, '/status'],
      [{ description: 'd'.repeat(257) }, '/description'],
      [{ id: 'whep_AAAAAAAAAAAAAAAAAAAAAA' }, '/id'],
    ] as const) {
      expect(violationsOf(await patch(token, before.id, json))?.map((v) => v.pointer)).toContain(pointer);
    }
    expect((await call('GET', `/api/wallet/webhooks/${before.id}`, { token })).json).toEqual(view);
  });
});

describe('DELETE /api/wallet/webhooks/{webhookId}', () => {
  it('deletes the endpoint: 204, then 404', async () => {
    const { token } = await merchant();
    const { id } = await registered(token);
    const deleted = await call('DELETE', `/api/wallet/webhooks/${id}`, { token });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await call('GET', `/api/wallet/webhooks/${id}`, { token }), 404);
    expectProblem(await call('DELETE', `/api/wallet/webhooks/${id}`, { token }), 404);
  });
});

describe('POST /api/wallet/webhooks/{webhookId}/rotate-secret', () => {
  it('answers a new secret, shown in that answer only', async () => {
    const { token } = await merchant();
    const { id, secret } = await registered(token);
    const rotated = await call('POST', `/api/wallet/webhooks/${id}/rotate-secret`, { token });
    expect(rotated.status).toBe(200);
    const next = (rotated.json as { secret: string }).secret;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect((await call('GET', `/api/wallet/webhooks/${id}`, { token })).text).not.toContain('whsec_');
  });
});

describe('GET /api/wallet/webhooks/{webhookId}/deliveries', () => {
  it('answers an empty log for a new endpoint, and 400 for a cursor not its own', async () => {
    const { token } = await merchant();
    const { id } = await registered(token);
    const page = await call('GET', `/api/wallet/webhooks/${id}/deliveries?limit=5`, { token });
    expect(page.json).toEqual({ items: [] });
    expectProblem(
      await call('GET', `/api/wallet/webhooks/${id}/deliveries?cursor=bm90LWEtY3Vyc29y`, { token }),
      400,
    );
    // Its own endpoint, and a position no attempt has (DynamoDB refused the empty one: a 500).
    for (const position of ['', 'not-an-attempt', '2026-01-01T00:00:00.000Z#evt_x#0001']) {
      const cursor = Buffer.from(JSON.stringify([id, position])).toString('base64url');
      expectProblem(
        await call('GET', `/api/wallet/webhooks/${id}/deliveries?cursor=${cursor}`, { token }),
        400,
      );
    }
    expectProblem(await call('GET', `/api/wallet/webhooks/${id}/deliveries?limit=0`, { token }), 400);
    expectProblem(await call('GET', `/api/wallet/webhooks/${id}/deliveries?limit=101`, { token }), 400);
  });
});

describe("another wallet's endpoint", () => {
  it('is not found by any route, and is left as it was', async () => {
    const owner = await merchant();
    const other = await merchant();
    const { id, secret: _secret, ...view } = await registered(owner.token);
    const base = `/api/wallet/webhooks/${id}`;
    const attempts: [string, string, unknown?][] = [
      ['GET', base],
      ['PATCH', base, { status: 'disabled' }],
      ['DELETE', base],
      ['POST', `${base}/rotate-secret`],
      ['GET', `${base}/deliveries`],
    ];
    for (const [method, path, json] of attempts) {
      expectProblem(
        await call(method, path, { token: other.token, ...(json === undefined ? {} : { json }) }),
        404,
      );
    }
    expect((await call('GET', '/api/wallet/webhooks', { token: other.token })).json).toEqual({ items: [] });
    expect((await call('GET', base, { token: owner.token })).json).toEqual({ id, ...view });
  });

  it('is as unknown as an id that was never issued, or is malformed', async () => {
    const { token } = await merchant();
    for (const id of ['whep_AAAAAAAAAAAAAAAAAAAAAA', 'nope', 'whep_%2e%2e']) {
      expectProblem(await call('GET', `/api/wallet/webhooks/${id}`, { token }), 404);
    }
  });
});

describe('the scopes of the endpoint routes', () => {
  it('lets read:webhooks read only, and write:webhooks change only', async () => {
    const owner = await merchant();
    const { id } = await registered(owner.token);
    const reader = await tokenFor('read:webhooks', { sub: owner.sub });
    const writer = await tokenFor('write:webhooks', { sub: owner.sub });
    expect((await call('GET', `/api/wallet/webhooks/${id}`, { token: reader })).status).toBe(200);
    expect((await call('GET', `/api/wallet/webhooks/${id}/deliveries`, { token: reader })).status).toBe(200);
    expectProblem(await call('GET', '/api/wallet/webhooks', { token: writer }), 403);
    expectProblem(await call('POST', `/api/wallet/webhooks/${id}/rotate-secret`, { token: reader }), 403);
    expectProblem(await call('PATCH', `/api/wallet/webhooks/${id}`, { token: reader, json: {} }), 403);
    expectProblem(await call('DELETE', `/api/wallet/webhooks/${id}`, { token: reader }), 403);
    const wallet = await tokenFor('read:wallet write:wallet', { sub: owner.sub });
    expectProblem(await call('GET', '/api/wallet/webhooks', { token: wallet }), 403);
  });

  it("needs read:wallet beside write:webhooks to point the wallet's events at a URL", async () => {
    const owner = await merchant();
    const { id } = await registered(owner.token);
    const writer = await tokenFor('write:webhooks', { sub: owner.sub });
    const url = 'https://elsewhere.example.com/hooks';
    expectProblem(await register(writer, { url }), 403);
    expectProblem(await call('PATCH', `/api/wallet/webhooks/${id}`, { token: writer, json: { url } }), 403);
    const since = new Date(Date.now() - 60_000).toISOString();
    expectProblem(
      await call('POST', `/api/wallet/webhooks/${id}/replay`, { token: writer, json: { since } }),
      403,
    );
    const anyEvent = `evt_${'A'.repeat(22)}`;
    const redeliver = { token: writer, json: { webhookId: id } };
    expectProblem(await call('POST', `/api/wallet/events/${anyEvent}/redeliver`, redeliver), 403);
    const endpoints = await call('GET', '/api/wallet/webhooks', { token: owner.token });
    expect(endpoints.json).toMatchObject({ items: [{ id, url: 'https://merchant.example.com/hooks' }] });
    // What sends nothing anywhere new needs the webhook scope alone.
    expect((await call('POST', `/api/wallet/webhooks/${id}/rotate-secret`, { token: writer })).status).toBe(
      200,
    );
    expect((await call('DELETE', `/api/wallet/webhooks/${id}`, { token: writer })).status).toBe(204);
  });
});
