/**
 * The endpoint functions under faults beneath the SDK and under their owners' own contention: a
 * write whose answer was lost counts once, DynamoDB down is a 503 that wrote nothing, and owners
 * racing on one wallet's endpoint set all get their answer, never a 503 of our own making.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCreateWebhookHandler } from '#functions/create-webhook/handler.ts';
import { createDeleteWebhookHandler } from '#functions/delete-webhook/handler.ts';
import { createListWebhooksHandler } from '#functions/list-webhooks/handler.ts';
import { createRotateWebhookSecretHandler } from '#functions/rotate-webhook-secret/handler.ts';
import { createUpdateWebhookHandler } from '#functions/update-webhook/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import {
  createDeliveryEndpointStore,
  createWebhookEndpointStore,
} from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { endpointsKey } from '#shared/webhooks/dynamodb/keys.ts';
import { eventIdOf } from '#shared/webhooks/model/webhook-event.ts';
import { createEnvelopeSealer } from '#shared/webhooks/secrets/envelope.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { mentions, proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';

const proxy = await startFaultProxy({ conflicts: true });
const tableName = process.env[tables.webhooks.envVar] as string;
const sealer = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));
const store = createWebhookEndpointStore({ client: proxiedClient(proxy), tableName });
const deps = { store, mode: 'deployed' as const, sealer };
const create = createCreateWebhookHandler(deps);
const list = createListWebhooksHandler(deps);
const update = createUpdateWebhookHandler(deps);
const remove = createDeleteWebhookHandler(deps);
const rotate = createRotateWebhookSecretHandler(deps);
const deliveries = createDeliveryEndpointStore({
  client: createDocumentClient(),
  tableName,
  sealer,
  clock: systemClock,
});
/** The owner's other requests, straight to DynamoDB Local: past the proxy's faults. */
const direct = {
  update: createUpdateWebhookHandler({
    ...deps,
    store: createWebhookEndpointStore({ client: createDocumentClient(), tableName }),
  }),
};

const SCOPES = ['read:webhooks', 'write:webhooks', 'read:wallet'];
const register = (sub: string, url = 'https://merchant.example.com/hooks') =>
  invoke(
    create,
    apiEvent({ method: 'POST', path: '/api/wallet/webhooks', sub, scopes: SCOPES, body: { url } }),
  );
const listOf = async (sub: string) =>
  (await invoke(list, apiEvent({ path: '/api/wallet/webhooks', sub, scopes: SCOPES }))).json.items as {
    id: string;
    description: string;
  }[];
const onEndpoint = (sub: string, id: string, method: string, body?: unknown, suffix = '') =>
  apiEvent({
    method,
    path: `/api/wallet/webhooks/${id}${suffix}`,
    resource: `/api/wallet/webhooks/{webhookId}${suffix}`,
    pathParameters: { webhookId: id },
    sub,
    scopes: SCOPES,
    ...(body === undefined ? {} : { body }),
  });
const stored = async (sub: string) =>
  ((await storedItem(tableName, { pk: endpointsKey(sub) }))?.endpoints ?? []) as { id: string }[];

describe('the endpoint functions under faults', () => {
  it('register once when the write was applied and its answer lost: 201 with the endpoint stored', async () => {
    const sub = uniqueSub('lost');
    proxy.inject({ kind: 'lose-response' }, { operation: 'PutItem', when: mentions(sub), times: 1 });
    const answer = await register(sub);
    expect(answer.statusCode).toBe(201);
    expect((await stored(sub)).map((e) => e.id)).toEqual([answer.json.id]);
  });

  it('delete once when the write was applied and its answer lost: 204, not 404', async () => {
    const sub = uniqueSub('lost-delete');
    const { id } = (await register(sub)).json;
    proxy.inject({ kind: 'lose-response' }, { operation: 'PutItem', when: mentions(sub), times: 1 });
    expect((await invoke(remove, onEndpoint(sub, id, 'DELETE'))).statusCode).toBe(204);
    expect(await stored(sub)).toEqual([]);
  });

  it('apply a change once when its answer was lost and another change of the set came before the retry', async () => {
    const sub = uniqueSub('lost-between');
    const [first, second] = [(await register(sub)).json, (await register(sub)).json];
    for (let n = 2; n < 9; n++) await register(sub, `https://m.example.com/${n}`);
    /**
     * The next write of the set is applied, then, before its answer is lost, the owner changes
     * another endpoint (a direct client: past the proxy): the retry finds that change stored.
     */
    const loseNextWriteAfterAnotherChange = () => {
      const changed = Promise.withResolvers<void>();
      proxy.inject(
        {
          kind: 'lose-response',
          until: changed.promise,
          answered: () =>
            void invoke(
              direct.update,
              onEndpoint(sub, second.id, 'PATCH', { description: randomUUID() }),
            ).then((answer) => {
              expect(answer.statusCode).toBe(200);
              changed.resolve();
            }),
        },
        // The write of the set, not its read: only writes carry its version.
        { when: (request) => mentions(sub)(request) && request.body.includes('version'), times: 1 },
      );
    };

    // The tenth endpoint: registered once and answered 201, not also refused by the bound.
    loseNextWriteAfterAnotherChange();
    const tenth = await register(sub, 'https://m.example.com/tenth');
    expect(tenth.statusCode).toBe(201);
    const ids = (await stored(sub)).map((e) => e.id);
    expect(ids.filter((id) => id === tenth.json.id)).toHaveLength(1);
    expect(ids).toHaveLength(10);

    // A rotation: the previous secret still signs beside the new one, not the new one twice.
    loseNextWriteAfterAnotherChange();
    const rotated = await invoke(rotate, onEndpoint(sub, first.id, 'POST', undefined, '/rotate-secret'));
    expect(rotated.statusCode).toBe(200);
    const signing = (await deliveries.endpointOf(sub, first.id))?.secrets;
    expect(new Set(signing)).toEqual(new Set([first.secret, rotated.json.secret]));

    // A deletion: 204 for the endpoint it deleted, not 404.
    loseNextWriteAfterAnotherChange();
    expect((await invoke(remove, onEndpoint(sub, first.id, 'DELETE'))).statusCode).toBe(204);
    expect((await stored(sub)).map((e) => e.id)).not.toContain(first.id);
  });

  it('answer 503 with Retry-After when DynamoDB keeps failing, having written nothing', async () => {
    const sub = uniqueSub('down');
    proxy.inject({ kind: 'server-error' }, { when: mentions(sub) });
    const answer = await register(sub);
    expect(answer.statusCode).toBe(503);
    expect(answer.headers?.['retry-after']).toMatch(/^\d+$/);
    proxy.heal();
    expect(await stored(sub)).toEqual([]);
  });
});

describe('what a refused request costs', () => {
  // Deployed, every seal is a KMS GenerateDataKey: billed, logged by CloudTrail, and drawn from the
  // quota the dispatcher's Decrypt shares. A request refused by what the set holds seals nothing.
  const seals = { count: 0 };
  const counting = {
    seal: (...args: Parameters<typeof sealer.seal>) => {
      seals.count++;
      return sealer.seal(...args);
    },
    open: sealer.open,
  };
  const countingDeps = {
    ...deps,
    store: createWebhookEndpointStore({ client: createDocumentClient(), tableName }),
    sealer: counting,
  };
  const countedCreate = createCreateWebhookHandler(countingDeps);
  const countedRotate = createRotateWebhookSecretHandler(countingDeps);

  it('seals no secret for a rotation of an endpoint the caller does not have, nor for an eleventh endpoint', async () => {
    const sub = uniqueSub('refused');
    for (let n = 0; n < 10; n++) await register(sub, `https://m.example.com/${n}`);
    seals.count = 0;
    const unknown = `whep_${'A'.repeat(22)}`;
    expect(
      (await invoke(countedRotate, onEndpoint(sub, unknown, 'POST', undefined, '/rotate-secret'))).statusCode,
    ).toBe(404);
    const eleventh = await invoke(
      countedCreate,
      apiEvent({
        method: 'POST',
        path: '/api/wallet/webhooks',
        sub,
        scopes: SCOPES,
        body: { url: 'https://m.example.com/11' },
      }),
    );
    expect(eleventh.statusCode).toBe(422);
    expect(seals.count).toBe(0);
  });
});

describe("owners racing on one wallet's endpoints", () => {
  it('register exactly 10 of 14 at once; the others are told the bound, none is told to come back', async () => {
    const sub = uniqueSub('race');
    const answers = await Promise.all(
      Array.from({ length: 14 }, (_, i) => register(sub, `https://m.example.com/${i}`)),
    );
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 422)).toHaveLength(4);
    const created = answers.filter((a) => a.statusCode === 201).map((a) => a.json.id as string);
    expect(new Set((await stored(sub)).map((e) => e.id))).toEqual(new Set(created));
  });

  it('lose no change when each of five endpoints is patched at once', async () => {
    const sub = uniqueSub('patches');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await register(sub)).json.id);
    const answers = await Promise.all(
      ids.map((id, i) => invoke(update, onEndpoint(sub, id, 'PATCH', { description: `changed ${i}` }))),
    );
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const after = new Map((await listOf(sub)).map((e) => [e.id, e.description]));
    expect(ids.map((id) => after.get(id))).toEqual(ids.map((_, i) => `changed ${i}`));
  });
});

describe("an endpoint's health as attempts are recorded", () => {
  /** Records an attempt of the endpoint answered 410 at `attemptedAt`; its health after. */
  const gone = (sub: string, id: string, attemptedAt: string) =>
    deliveries.recordAttempt({
      address: sub,
      endpointId: id,
      eventId: eventIdOf('transfer.received', randomUUID()),
      eventType: 'transfer.received',
      attempt: 1,
      attemptedAt,
      outcome: 'gone',
      statusCode: 410,
      durationMs: 5,
      trigger: 'schedule',
    });
  /** An attempt in flight (answered, not yet recorded) while its owner changes the endpoint. */
  async function inFlightWhile(change: () => Promise<unknown>): Promise<string> {
    const attemptedAt = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await change();
    return attemptedAt;
  }

  it('stays enabled when a 410 answered before its owner enabled it again is recorded after', async () => {
    const sub = uniqueSub('gone');
    const { id } = (await register(sub)).json as { id: string };
    expect(await gone(sub, id, new Date().toISOString())).toMatchObject({
      status: 'disabled',
      disabledNow: true,
    });
    const attemptedAt = await inFlightWhile(async () => {
      const enabled = await invoke(update, onEndpoint(sub, id, 'PATCH', { status: 'enabled' }));
      expect(enabled.statusCode, enabled.body).toBe(200);
      expect(enabled.json).not.toHaveProperty('healthFrom');
    });

    // As first built, it disabled the endpoint again: the owner's replay was then a 409.
    expect(await gone(sub, id, attemptedAt)).toMatchObject({ status: 'enabled', disabledNow: false });
    expect((await listOf(sub)).find((endpoint) => endpoint.id === id)).toMatchObject({ status: 'enabled' });
    // One made after it still disables it.
    expect(await gone(sub, id, new Date().toISOString())).toMatchObject({
      status: 'disabled',
      disabledNow: true,
    });
  });

  it('stays enabled at its new URL when a 410 of the URL it left is recorded after the move', async () => {
    const sub = uniqueSub('moved');
    const { id } = (await register(sub)).json as { id: string };
    const attemptedAt = await inFlightWhile(async () => {
      const moved = await invoke(
        update,
        onEndpoint(sub, id, 'PATCH', { url: 'https://merchant.example.com/hooks/v2' }),
      );
      expect(moved.statusCode, moved.body).toBe(200);
    });

    // As first built, the old URL's 410 disabled the endpoint at its new one.
    expect(await gone(sub, id, attemptedAt)).toMatchObject({ status: 'enabled', disabledNow: false });
    expect(await gone(sub, id, new Date().toISOString())).toMatchObject({
      status: 'disabled',
      disabledNow: true,
    });
  });
});
