/**
 * What the dispatcher sees of the endpoints registered through the gateway: their secrets, opened
 * from the table of the gateway's own stack, signing real deliveries to a loopback receiver that
 * verifies them with the npm package `standardwebhooks`; and the attempts it records, as the
 * delivery log route pages them.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { createDeliveryEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { endpointsKey } from '#shared/webhooks/dynamodb/keys.ts';
import { SIGNING_SECRETS_MAX } from '#shared/webhooks/model/endpoint.ts';
import type { DeliveryAttempt } from '#shared/webhooks/model/ports.ts';
import { eventIdOf } from '#shared/webhooks/model/webhook-event.ts';
import { secretSealerFromEnv } from '#shared/webhooks/secrets/keeper.ts';
import { uniqueSub } from '../support/events.ts';
import { loopbackDeliver } from '../support/webhook-dispatcher.ts';
import { call, expectProblem, gateway, tokenFor } from './http.ts';

const HOUR = 3_600_000;

let stack: NonNullable<Awaited<ReturnType<typeof readRunningStack>>>;
let receiver: Server;
let receiverUrl: string;
const received: { headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  const running = await readRunningStack(gateway.port, gateway.stateDir);
  if (!running) throw new Error('the gateway of the e2e run left no stack record');
  stack = running;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});
afterAll(() => new Promise((r) => receiver.close(r)));

/** The dispatcher's store over the gateway's table, at the time `now` gives. */
function dispatcherStore(now: () => number = Date.now) {
  return createDeliveryEndpointStore({
    client: createDocumentClient({ endpoint: stack.dynamodbLocalEndpoint }),
    tableName: stack.env[tables.webhooks.envVar] as string,
    sealer: secretSealerFromEnv(stack.env),
    clock: { now },
  });
}

async function merchantWithEndpoint(json: Record<string, unknown> = {}) {
  const sub = uniqueSub('merchant');
  const token = await tokenFor('read:webhooks write:webhooks read:wallet', { sub });
  const created = await call('POST', '/api/wallet/webhooks', { token, json: { url: receiverUrl, ...json } });
  expect(created.status).toBe(201);
  const { id, secret } = created.json as { id: string; secret: string };
  return { sub, token, id, secret };
}

/** Delivers one event through the store's view of the endpoint; what the receiver got. */
async function deliverVia(store: ReturnType<typeof dispatcherStore>, sub: string, id: string) {
  const [endpoint] = await store.endpointsFor(sub, 'transfer.received');
  if (!endpoint || endpoint.endpointId !== id) throw new Error('the endpoint is not subscribed');
  const message = {
    id: `evt_${crypto.randomUUID()}`,
    body: JSON.stringify({ type: 'transfer.received', data: { id } }),
  };
  const result = await loopbackDeliver()(endpoint, message);
  expect(result.outcome).toBe('delivered');
  const got = received.find((r) => r.headers['webhook-id'] === message.id);
  if (!got) throw new Error('nothing received');
  return {
    body: got.body,
    headers: {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    },
  };
}

const verifies = (secret: string, delivery: { body: string; headers: Record<string, string> }) => {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers);
    return true;
  } catch {
    return false;
  }
};

describe('the signing secret', () => {
  it('signs deliveries that standardwebhooks verifies with the secret the registration showed', async () => {
    const { sub, id, secret } = await merchantWithEndpoint();
    const delivery = await deliverVia(dispatcherStore(), sub, id);
    expect(verifies(secret, delivery)).toBe(true);
  });

  it('after a rotation, verifies with the old and the new secret for 24 h, then with the new one only', async () => {
    const { sub, token, id, secret: old } = await merchantWithEndpoint();
    const rotated = await call('POST', `/api/wallet/webhooks/${id}/rotate-secret`, { token });
    const next = (rotated.json as { secret: string }).secret;

    const during = await deliverVia(
      dispatcherStore(() => Date.now() + 23 * HOUR),
      sub,
      id,
    );
    expect(verifies(old, during)).toBe(true);
    expect(verifies(next, during)).toBe(true);

    const after = await deliverVia(
      dispatcherStore(() => Date.now() + 24 * HOUR + 60_000),
      sub,
      id,
    );
    expect(verifies(next, after)).toBe(true);
    expect(verifies(old, after)).toBe(false);
  });

  it('keeps a rotated-out secret signing for its own 24 h when the rotation is asked again, as after a lost answer', async () => {
    const { sub, token, id, secret: held } = await merchantWithEndpoint();
    const rotate = async () =>
      ((await call('POST', `/api/wallet/webhooks/${id}/rotate-secret`, { token })).json as { secret: string })
        .secret;
    // The first answer never reached the merchant, which still verifies with `held` and asks again.
    const lost = await rotate();
    const latest = await rotate();
    const during = await deliverVia(
      dispatcherStore(() => Date.now() + 23 * HOUR),
      sub,
      id,
    );
    expect([held, lost, latest].map((s) => verifies(s, during))).toEqual([true, true, true]);
    const after = await deliverVia(
      dispatcherStore(() => Date.now() + 24 * HOUR + 60_000),
      sub,
      id,
    );
    expect([held, lost, latest].map((s) => verifies(s, after))).toEqual([false, false, true]);
  });

  it('signs with three secrets at most: a third rotation within the day drops the oldest', async () => {
    const { sub, token, id, secret: first } = await merchantWithEndpoint();
    const rotated: string[] = [];
    for (let n = 0; n < 3; n++) {
      const answer = await call('POST', `/api/wallet/webhooks/${id}/rotate-secret`, { token });
      rotated.push((answer.json as { secret: string }).secret);
    }
    const delivery = await deliverVia(dispatcherStore(), sub, id);
    expect(delivery.headers['webhook-signature'].split(' ')).toHaveLength(SIGNING_SECRETS_MAX);
    expect([first, ...rotated].map((s) => verifies(s, delivery))).toEqual([false, true, true, true]);
  });

  it('is stored sealed: the item holds neither the secret nor its bytes', async () => {
    const { sub, secret } = await merchantWithEndpoint();
    const client = createDocumentClient({ endpoint: stack.dynamodbLocalEndpoint });
    const { Item } = await client.send(
      new GetCommand({
        TableName: stack.env[tables.webhooks.envVar],
        Key: { pk: endpointsKey(sub) },
        ConsistentRead: true,
      }),
    );
    const text = JSON.stringify(Item);
    expect(text).toContain('ciphertext');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice('whsec_'.length));
  });

  it('is not given to a disabled endpoint or one not subscribed to the type', async () => {
    const { sub, token, id } = await merchantWithEndpoint({ eventTypes: ['transfer.received'] });
    const store = dispatcherStore();
    expect(await store.endpointsFor(sub, 'deposit.received')).toEqual([]);
    await call('PATCH', `/api/wallet/webhooks/${id}`, { token, json: { status: 'disabled' } });
    expect(await store.endpointsFor(sub, 'transfer.received')).toEqual([]);
    expect(await store.endpointOf(sub, id)).toMatchObject({ endpointId: id, status: 'disabled' });
    expect(await store.endpointOf(uniqueSub('other'), id)).toBeUndefined();
  });
});

describe('the delivery log', () => {
  /** Within the 30 days the log keeps. */
  const recently = Date.now() - HOUR;
  const attempt = (
    sub: string,
    endpointId: string,
    n: number,
    over: Partial<DeliveryAttempt> = {},
  ): DeliveryAttempt => ({
    address: sub,
    endpointId,
    eventId: eventIdOf('transfer.received', `${endpointId}#${n}`),
    eventType: 'transfer.received',
    attempt: 1,
    attemptedAt: new Date(recently + n * 1000).toISOString(),
    outcome: 'retry',
    statusCode: 503,
    errorClass: 'http-status',
    durationMs: 10 + n,
    trigger: 'schedule',
    ...over,
  });

  it('pages the attempts the dispatcher recorded, newest first, to its owner only', async () => {
    const { sub, token, id } = await merchantWithEndpoint();
    const store = dispatcherStore();
    for (let n = 1; n <= 5; n++) await store.recordAttempt(attempt(sub, id, n));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(
        'GET',
        `/api/wallet/webhooks/${id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { token },
      );
      expect(page.status).toBe(200);
      const body = page.json as { items: { eventId: string }[]; nextCursor?: string };
      seen.push(...body.items.map((i) => i.eventId));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([5, 4, 3, 2, 1].map((n) => attempt(sub, id, n).eventId));

    const other = await merchantWithEndpoint();
    const first = (await call('GET', `/api/wallet/webhooks/${id}/deliveries?limit=1`, { token })).json as {
      nextCursor: string;
    };
    // Its own cursor on another endpoint's log, and the log of another wallet's endpoint.
    expectProblem(
      await call('GET', `/api/wallet/webhooks/${other.id}/deliveries?cursor=${first.nextCursor}`, {
        token: other.token,
      }),
      400,
    );
    expectProblem(await call('GET', `/api/wallet/webhooks/${id}/deliveries`, { token: other.token }), 404);
  });

  it('shows failures as failing since the first one, and a 410 as disabled (gone)', async () => {
    const { sub, token, id } = await merchantWithEndpoint();
    const store = dispatcherStore();
    const first = attempt(sub, id, 1);
    expect(await store.recordAttempt(first)).toMatchObject({
      status: 'enabled',
      failingSince: first.attemptedAt,
      disabledNow: false,
    });
    expect((await call('GET', `/api/wallet/webhooks/${id}`, { token })).json).toMatchObject({
      failingSince: first.attemptedAt,
    });
    expect(
      await store.recordAttempt(attempt(sub, id, 2, { outcome: 'gone', statusCode: 410 })),
    ).toMatchObject({
      status: 'disabled',
      disabledReason: 'gone',
      disabledNow: true,
    });
    expect((await call('GET', `/api/wallet/webhooks/${id}`, { token })).json).toMatchObject({
      status: 'disabled',
      disabledReason: 'gone',
    });
    const enabled = await call('PATCH', `/api/wallet/webhooks/${id}`, { token, json: { status: 'enabled' } });
    expect(enabled.json).not.toHaveProperty('failingSince');
  });

  it('disables an endpoint that failed for 5 days without a success', async () => {
    const { sub, token, id } = await merchantWithEndpoint();
    const store = dispatcherStore();
    const start = Date.parse('2026-05-01T00:00:00Z');
    await store.recordAttempt(attempt(sub, id, 1, { attemptedAt: new Date(start).toISOString() }));
    const justBefore = await store.recordAttempt(
      attempt(sub, id, 2, { attemptedAt: new Date(start + 5 * 24 * HOUR - 1000).toISOString() }),
    );
    expect(justBefore.status).toBe('enabled');
    const fifthDay = await store.recordAttempt(
      attempt(sub, id, 3, {
        attemptedAt: new Date(start + 5 * 24 * HOUR).toISOString(),
        outcome: 'refused-address',
      }),
    );
    expect(fifthDay).toMatchObject({ status: 'disabled', disabledReason: 'failing', disabledNow: true });
    expect((await call('GET', `/api/wallet/webhooks/${id}`, { token })).json).toMatchObject({
      status: 'disabled',
      disabledReason: 'failing',
    });
  });
});
