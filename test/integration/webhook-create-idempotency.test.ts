import { randomBytes, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createCreateWebhookHandler } from '#functions/create-webhook/handler.ts';
import { createDeleteWebhookHandler } from '#functions/delete-webhook/handler.ts';
import { createRotateWebhookSecretHandler } from '#functions/rotate-webhook-secret/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { createKeyItemKey, endpointsKey } from '#shared/webhooks/dynamodb/keys.ts';
import { createEnvelopeSealer } from '#shared/webhooks/secrets/envelope.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';
import { apiEvent, idempotencyKeyHeaders, invoke, uniqueSub } from '../support/events.ts';
import { proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';

// createWebhook with an Idempotency-Key, through the real function, on DynamoDB Local behind the
// conflict proxy: without a key, a client that lost the 201 and retried registered a second
// endpoint, whose secret it then held while the first one's was lost.
const proxy = await startFaultProxy({ conflicts: true });
const tableName = process.env[tables.webhooks.envVar] as string;
const sealer = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));
const deps = {
  store: createWebhookEndpointStore({ client: proxiedClient(proxy), tableName }),
  mode: 'deployed' as const,
  sealer,
};
const create = createCreateWebhookHandler(deps);
const remove = createDeleteWebhookHandler(deps);
const rotate = createRotateWebhookSecretHandler(deps);

const SCOPES = ['read:webhooks', 'write:webhooks', 'read:wallet'];
const BODY = { url: 'https://merchant.example.com/hooks', eventTypes: ['transfer.received'] };

const register = (sub: string, body: unknown, key?: string | string[]) =>
  invoke(
    create,
    apiEvent({
      method: 'POST',
      path: '/api/wallet/webhooks',
      sub,
      scopes: SCOPES,
      body,
      ...idempotencyKeyHeaders(key),
    }),
  );
const onEndpoint = (handler: typeof create, sub: string, id: string, method: string, suffix = '') =>
  invoke(
    handler,
    apiEvent({
      method,
      path: `/api/wallet/webhooks/${id}${suffix}`,
      resource: `/api/wallet/webhooks/{webhookId}${suffix}`,
      pathParameters: { webhookId: id },
      sub,
      scopes: SCOPES,
    }),
  );
const storedIds = async (sub: string) =>
  (((await storedItem(tableName, { pk: endpointsKey(sub) }))?.endpoints ?? []) as { id: string }[]).map(
    (e) => e.id,
  );

/** The answer to a registration the key had already made: 409 naming that endpoint. */
function expectRegisteredBefore(answer: Awaited<ReturnType<typeof register>>, endpointId: string) {
  expect(answer.statusCode).toBe(409);
  expect(answer.contentType).toBe('application/problem+json');
  expect(answer.json).toMatchObject({ status: 409, endpointId });
  expect(answer.json.type).toMatch(/webhook-endpoint-registered$/);
  expect(answer.json.detail).toContain(`webhooks/${endpointId}/rotate-secret`);
  expect(answer.headers?.location).toBe(`webhooks/${endpointId}`);
  // Never the secret: this function cannot open it, and shows no other.
  expect(answer.body).not.toMatch(/whsec_/);
}

describe('POST /api/wallet/webhooks with an Idempotency-Key', () => {
  it('registers once: the same key and request again registers nothing and answers 409 naming the endpoint', async () => {
    const sub = uniqueSub('idem');
    const key = randomUUID();
    const first = await register(sub, BODY, key);
    expect(first.statusCode).toBe(201);
    expect(first.json.secret).toMatch(/^whsec_/);
    // The same endpoint asked for: the types listed again, a description left empty, the key quoted.
    const again = await register(
      sub,
      { eventTypes: ['transfer.received', 'transfer.received'], description: '', url: BODY.url },
      `"${key}"`,
    );
    expectRegisteredBefore(again, first.json.id);
    expect(await storedIds(sub)).toEqual([first.json.id]);
    // The way back to a secret the 409 points to: a rotation of that endpoint.
    const rotated = await onEndpoint(rotate, sub, first.json.id, 'POST', '/rotate-secret');
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json.secret).toMatch(/^whsec_/);
  });

  it('answers 422 idempotency-key-reused for the same key with another request, and registers nothing', async () => {
    const sub = uniqueSub('idem');
    const key = randomUUID();
    const first = await register(sub, BODY, key);
    expect(first.statusCode).toBe(201);
    for (const other of [
      { ...BODY, url: 'https://merchant.example.com/other' },
      { ...BODY, eventTypes: ['transfer.completed'] },
      { ...BODY, description: 'another' },
    ]) {
      const answer = await register(sub, other, key);
      expect(answer.statusCode).toBe(422);
      expect(answer.contentType).toBe('application/problem+json');
      expect(answer.json.type).toMatch(/idempotency-key-reused$/);
    }
    expect(await storedIds(sub)).toEqual([first.json.id]);
  });

  it('8 concurrent registrations with one key: exactly one endpoint, one 201, the others 409 naming it', async () => {
    const sub = uniqueSub('idem');
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => register(sub, BODY, key)));
    const created = answers.filter((answer) => answer.statusCode === 201);
    expect(created).toHaveLength(1);
    const id = created[0]?.json.id as string;
    for (const answer of answers.filter((a) => a.statusCode !== 201)) expectRegisteredBefore(answer, id);
    expect(await storedIds(sub)).toEqual([id]);
    expect(await storedItem(tableName, { pk: createKeyItemKey(sub, key) })).toMatchObject({ endpointId: id });
  });

  it("keys are the caller's: another wallet's same key registers its own endpoint, and replays it", async () => {
    const key = randomUUID();
    const [alice, bob] = [uniqueSub('idem-a'), uniqueSub('idem-b')];
    const first = await register(alice, BODY, key);
    expectRegisteredBefore(await register(alice, BODY, key), first.json.id);
    // The same request too: Alice's record is no answer to Bob.
    const second = await register(bob, BODY, key);
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(second.json.id).not.toBe(first.json.id);
    expectRegisteredBefore(await register(bob, BODY, key), second.json.id);
    expect(await storedIds(alice)).toEqual([first.json.id]);
    expect(await storedIds(bob)).toEqual([second.json.id]);
  });

  it('the key holds its endpoint when the wallet is full: 409, not the 10-endpoint bound', async () => {
    const sub = uniqueSub('idem');
    for (let n = 0; n < 9; n++) expect((await register(sub, BODY)).statusCode).toBe(201);
    const key = randomUUID();
    const tenth = await register(sub, BODY, key);
    expect(tenth.statusCode).toBe(201);
    expectRegisteredBefore(await register(sub, BODY, key), tenth.json.id);
  });

  it('an endpoint the key registered and deleted since: 409 naming it, without Location, nothing registered', async () => {
    const sub = uniqueSub('idem');
    const key = randomUUID();
    const first = await register(sub, BODY, key);
    expect((await onEndpoint(remove, sub, first.json.id, 'DELETE')).statusCode).toBe(204);
    const again = await register(sub, BODY, key);
    expect(again.statusCode).toBe(409);
    expect(again.json).toMatchObject({ endpointId: first.json.id });
    expect(again.headers?.location).toBeUndefined();
    expect(await storedIds(sub)).toEqual([]);
  });

  it('a key past its expiry that TTL has not swept is free again', async () => {
    const sub = uniqueSub('idem');
    const key = randomUUID();
    const first = await register(sub, BODY, key);
    const record = await storedItem(tableName, { pk: createKeyItemKey(sub, key) });
    expect(record?.expiresAt).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 86_400 - 60);
    // Straight to DynamoDB Local: the record as it is once its day has passed.
    await createDocumentClient().send(
      new PutCommand({
        TableName: tableName,
        Item: { ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const again = await register(sub, BODY, key);
    expect(again.statusCode).toBe(201);
    expect(await storedIds(sub)).toEqual([first.json.id, again.json.id]);
  });

  it('without a key, unchanged: the same request twice registers two endpoints', async () => {
    const sub = uniqueSub('idem');
    const [first, second] = [await register(sub, BODY), await register(sub, BODY)];
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(first.headers?.location).toBe(`webhooks/${first.json.id}`);
    expect(await storedIds(sub)).toEqual([first.json.id, second.json.id]);
  });

  it('answers 400 for a key sent twice or malformed, and registers nothing', async () => {
    const sub = uniqueSub('idem');
    for (const key of [['k1', 'k2'], 'k1, k2', '"a"b"']) {
      const answer = await register(sub, BODY, key);
      expect(answer.statusCode).toBe(400);
      expect(answer.json.type).toMatch(/invalid-parameter$/);
    }
    expect(await storedIds(sub)).toEqual([]);
  });
});
