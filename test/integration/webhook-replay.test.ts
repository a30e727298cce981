import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createReplayWebhookHandler } from '#functions/replay-webhook/handler.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { replayKey, taskKey } from '#shared/webhooks/dynamodb/event-keys.ts';
import { createTaskStore } from '#shared/webhooks/dynamodb/task-store.ts';
import { createEndpointManagement } from '#shared/webhooks/endpoint-functions.ts';
import { DERIVE_COMMIT_WITHIN_MS, REPLAY_SETTLE_MS } from '#shared/webhooks/model/replay-settle.ts';
import { createEnvelopeSealer } from '#shared/webhooks/secrets/envelope.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { mentions, proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';
import { storedEvents } from '../support/webhook-events.ts';

/*
 * Issue 46's replay, one at a time per endpoint: one request replays up to 30 days of a wallet's
 * events, so a replay asked while one is still being sent must not send them all again, or a
 * client retrying a lost answer, or a merchant clicking twice, would multiply the deliveries and
 * fill the `due` index every dispatcher reads. The real handler on DynamoDB Local,
 * through the fault proxy, and the dispatcher's expansion step. The endpoint is https to a name no
 * test resolves: nothing is delivered.
 */

const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
const tableName = process.env[tables.webhooks.envVar] as string;
const sealer = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));
const handler = createReplayWebhookHandler({ client, tableName });
afterAll(() => client.destroy());

const HOUR = 3_600_000;

/**
 * A wallet with one endpoint: its address and the endpoint's id. On `loopback`, where nothing
 * listens (the discard port), for a test that expands tasks: another test's dispatcher may take them.
 */
async function merchant(on: 'a public name' | 'loopback' = 'a public name') {
  const sub = uniqueSub('merchant');
  const { endpoint } = await createEndpointManagement({
    store: createWebhookEndpointStore({ client, tableName }),
    mode: on === 'loopback' ? 'local' : 'deployed',
    sealer,
  }).create({
    address: sub,
    url: on === 'loopback' ? 'http://127.0.0.1:9/hooks' : 'https://merchant.example.com/hooks',
  });
  return { sub, endpointId: endpoint.id };
}

function replay(sub: string, endpointId: string, since: Date) {
  return invoke(
    handler,
    apiEvent({
      method: 'POST',
      path: `/api/wallet/webhooks/${endpointId}/replay`,
      resource: '/api/wallet/webhooks/{webhookId}/replay',
      pathParameters: { webhookId: endpointId },
      body: { since: since.toISOString() },
      sub,
      scopes: ['write:webhooks', 'read:wallet'],
    }),
  );
}

const storedReplay = (endpointId: string) => storedItem(tableName, { pk: replayKey(endpointId) });

/**
 * The endpoint's replay claimed as the dispatcher claims it, to expand it as the dispatcher does:
 * a dispatcher here would also take other tests' tasks.
 */
async function claimed(sub: string, endpointId: string) {
  const tasks = createTaskStore({ client, tableName });
  const item = (await storedReplay(endpointId)) as Record<string, unknown>;
  const work = {
    kind: 'replay' as const,
    key: replayKey(endpointId),
    address: sub,
    endpointId,
    replayId: String(item.replayId),
    since: String(item.since),
    ...(typeof item.cursor === 'string' ? { cursor: item.cursor } : {}),
    dueAt: Number(item.dueAt),
  };
  const leaseUntil = Date.now() + 30_000;
  expect(await tasks.claimAll([work], leaseUntil)).toEqual([true]);
  return { tasks, work, leaseUntil };
}

describe('POST /api/wallet/webhooks/{webhookId}/replay, after an endpoint was enabled', () => {
  it('looks for the events REPLAY_SETTLE_MS after it was asked, once a commit read before it has landed', async () => {
    const { sub, endpointId } = await merchant();
    const asked = Date.now();
    expect((await replay(sub, endpointId, new Date(asked - HOUR))).statusCode).toBe(202);
    const answered = Date.now();
    // As first built, due at once: it could look before an event read while the endpoint was still
    // disabled was committed, and that event got no task at all.
    const dueAt = Number((await storedReplay(endpointId))?.dueAt);
    expect(dueAt).toBeGreaterThanOrEqual(asked + REPLAY_SETTLE_MS);
    expect(dueAt).toBeLessThanOrEqual(answered + REPLAY_SETTLE_MS);
    expect(REPLAY_SETTLE_MS).toBeGreaterThan(DERIVE_COMMIT_WITHIN_MS);
  });
});

describe('POST /api/wallet/webhooks/{webhookId}/replay, one replay per endpoint at a time', () => {
  it('asked again while one is being sent: answers that one when it covers the request, 409 when it does not, and starts nothing', async () => {
    const { sub, endpointId } = await merchant();
    const since = new Date(Date.now() - HOUR);
    const first = await replay(sub, endpointId, since);
    expect(first.statusCode, first.body).toBe(202);
    const { replayId } = first.json as { replayId: string };

    // The same request again (a retry after a lost answer), and one since later: covered.
    for (const later of [since, new Date(since.getTime() + 600_000)]) {
      const again = await replay(sub, endpointId, later);
      expect(again.statusCode, again.body).toBe(202);
      expect(again.json).toEqual({ replayId, since: since.toISOString() });
    }
    // Since earlier: the one in progress would not send the events before its own `since`.
    const earlier = await replay(sub, endpointId, new Date(since.getTime() - 600_000));
    expect(earlier.statusCode, earlier.body).toBe(409);
    expect(earlier.contentType).toBe('application/problem+json');
    expect(earlier.json).toMatchObject({ status: 409, type: expect.stringContaining('replay-in-progress') });
    expect((earlier.json as { detail: string }).detail).toContain(replayId);

    expect(await storedReplay(endpointId)).toMatchObject({ replayId, since: since.toISOString() });
  });

  it('answers 409 when the one in progress has expanded past the time asked: those tasks may have ended while the endpoint was disabled', async () => {
    const { sub, endpointId } = await merchant();
    const [event] = await storedEvents({ client, tableName }, sub, [HOUR / 2]);
    const timestamp = event?.timestamp as string;
    const first = await replay(sub, endpointId, new Date(Date.now() - HOUR));
    expect(first.statusCode, first.body).toBe(202);
    const { replayId } = first.json as { replayId: string };
    // One step of one event: expanded up to the event, and not done.
    const { tasks, work, leaseUntil } = await claimed(sub, endpointId);
    // No event type: no task for another test's dispatcher to send to a name on the Internet.
    expect(await tasks.expandReplay(work, leaseUntil, [], 1)).toBe(false);

    const beforeIt = await replay(sub, endpointId, new Date(Date.parse(timestamp) - 60_000));
    expect(beforeIt.statusCode, beforeIt.body).toBe(409);
    const afterIt = await replay(sub, endpointId, new Date(Date.parse(timestamp) + 1));
    expect(afterIt.statusCode, afterIt.body).toBe(202);
    expect((afterIt.json as { replayId: string }).replayId).toBe(replayId);
  });

  it('answers 409 when the one in progress has written tasks past the time asked, though its cursor write failed', async () => {
    const { sub, endpointId } = await merchant('loopback');
    const stored = await storedEvents({ client, tableName }, sub, [HOUR / 2, HOUR / 4]);
    const first = await replay(sub, endpointId, new Date(Date.now() - HOUR));
    expect(first.statusCode, first.body).toBe(202);
    // One step of one event: its task written, then every try of the cursor's move reset.
    proxy.inject(
      { kind: 'reset' },
      {
        operation: 'UpdateItem',
        when: (request) => mentions(replayKey(endpointId))(request) && request.body.includes('#cursor'),
      },
    );
    const { tasks, work, leaseUntil } = await claimed(sub, endpointId);
    await expect(tasks.expandReplay(work, leaseUntil, ['transfer.received'], 1)).rejects.toThrow();
    proxy.heal();
    const [written] = stored;
    expect(
      await storedItem(tableName, { pk: taskKey(written?.id as string, endpointId, work.replayId) }),
    ).toBeDefined();

    // That task may end while the endpoint is disabled, and the step, done again, leaves it as it is:
    // as first built, the one in progress (its cursor still unset) answered this 202, and the event
    // was never sent again.
    const beforeIt = await replay(
      sub,
      endpointId,
      new Date(Date.parse(written?.timestamp as string) - 60_000),
    );
    expect(beforeIt.statusCode, beforeIt.body).toBe(409);
    const afterIt = await replay(sub, endpointId, new Date(Date.parse(written?.timestamp as string) + 1));
    expect(afterIt.statusCode, afterIt.body).toBe(202);
    expect((afterIt.json as { replayId: string }).replayId).toBe(work.replayId);
  });

  it('answers 409 when the endpoint was enabled again since the one in progress was asked', async () => {
    const { sub, endpointId } = await merchant();
    const since = new Date(Date.now() - HOUR);
    const first = await replay(sub, endpointId, since);
    expect(first.statusCode, first.body).toBe(202);
    // Disabled (a 410, its owner) and enabled again while the first is being sent.
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (const status of ['disabled', 'enabled'] as const) {
      await createEndpointManagement({
        store: createWebhookEndpointStore({ client, tableName }),
        mode: 'deployed',
      }).update(sub, endpointId, { status });
    }
    // As first built, 202 naming the first: it could end before an event stored while the endpoint
    // was disabled was committed, and that event had no task of any origin.
    const again = await replay(sub, endpointId, since);
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json).toMatchObject({ type: expect.stringContaining('replay-in-progress') });
  });

  it('starts the next replay once the one before is done', async () => {
    const { sub, endpointId } = await merchant();
    const first = await replay(sub, endpointId, new Date(Date.now() - HOUR));
    expect(first.statusCode, first.body).toBe(202);
    // The dispatcher's step; with no event to expand, done at its first.
    const { tasks, work, leaseUntil } = await claimed(sub, endpointId);
    expect(await tasks.expandReplay(work, leaseUntil, [], 100)).toBe(true);
    const earlier = new Date(Date.now() - 2 * HOUR);
    const next = await replay(sub, endpointId, earlier);
    expect(next.statusCode, next.body).toBe(202);
    const { replayId } = next.json as { replayId: string };
    expect(replayId).not.toBe((first.json as { replayId: string }).replayId);
    expect(await storedReplay(endpointId)).toMatchObject({ replayId, since: earlier.toISOString() });
    expect((await storedReplay(endpointId))?.ended).toBeUndefined();
  });

  it('counts its own put as started when DynamoDB applied it and its answer was lost', async () => {
    const { sub, endpointId } = await merchant();
    proxy.inject(
      { kind: 'lose-response' },
      { operation: 'PutItem', when: mentions(replayKey(endpointId)), times: 1 },
    );
    const started = await replay(sub, endpointId, new Date(Date.now() - HOUR));
    expect(started.statusCode, started.body).toBe(202);
    // The retry found the item its first try wrote: that replay, not another's in progress.
    expect(proxy.requests('PutItem', mentions(replayKey(endpointId)))).toHaveLength(2);
    expect(await storedReplay(endpointId)).toMatchObject({
      replayId: (started.json as { replayId: string }).replayId,
    });
  });
});
