import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWebhookDispatcher } from '#functions/dispatch-webhooks/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { createHttpDeliver } from '#shared/webhooks/delivery/http-delivery.ts';
import { runDispatcher } from '#shared/webhooks/dispatch/dispatcher.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { createEventStore } from '#shared/webhooks/dynamodb/event-store.ts';
import { createEndpointManagement } from '#shared/webhooks/endpoint-functions.ts';
import { eventIdOf } from '#shared/webhooks/model/webhook-event.ts';
import { createEnvelopeSealer } from '#shared/webhooks/secrets/envelope.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';
import { uniqueSub } from '../support/events.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/*
 * Issue 46, "One dead endpoint slows no other": a wallet with two endpoints, one that never
 * answers; the dispatcher on DynamoDB Local, delivering over HTTP on loopback. Every event reaches
 * the live endpoint while the dead one's first attempts are still hanging (none has timed out):
 * the dead endpoint holds its own slots only.
 */

const env = inject('env');
const client = createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT as string });
const tableName = env.WEBHOOKS_TABLE_NAME as string;
const sealer = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));
const EVENTS = 30;

let live: WebhookReceiver;
let dead: WebhookReceiver;
beforeAll(async () => {
  [live, dead] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  dead.hang = true;
});
afterAll(async () => {
  await Promise.all([live.close(), dead.close()]);
  client.destroy();
});

describe('a webhook endpoint that never answers', () => {
  it('delays no other endpoint: every event reaches the live one while the dead one’s attempts still hang', {
    timeout: 90_000,
  }, async () => {
    const address = uniqueSub('shop');
    const management = createEndpointManagement({
      store: createWebhookEndpointStore({ client, tableName }),
      mode: 'local',
      sealer,
    });
    // The dead one first: its tasks come first in every poll.
    const ids: string[] = [];
    for (const receiver of [dead, live]) {
      const { endpoint, secret } = await management.create({ address, url: receiver.url });
      receiver.secrets.push(secret);
      ids.push(endpoint.id);
    }
    const store = createEventStore({ client, tableName });
    const events = Array.from({ length: EVENTS }, () => {
      const id = eventIdOf('transfer.received', randomUUID());
      const timestamp = new Date().toISOString();
      return {
        id,
        type: 'transfer.received' as const,
        address,
        timestamp,
        body: JSON.stringify({ type: 'transfer.received', timestamp, data: { address } }),
      };
    });
    expect(await store.recordAll(events.map((event) => ({ event, endpointIds: ids })))).toEqual(
      events.map(() => 'recorded'),
    );

    const attemptsEnded: string[] = [];
    // A timeout far past what the live endpoint needs, so that "still hanging" is what it says.
    const deliver = createHttpDeliver({ mode: 'local', timeoutMs: 60_000 });
    const dispatcher = createWebhookDispatcher({
      client,
      tableName,
      sealer,
      mode: 'local',
      schedule: [0, 1],
      deliver: async (target, message) => {
        const result = await deliver(target, message);
        attemptsEnded.push(target.endpointId);
        return result;
      },
    });
    const stop = new AbortController();
    const running = runDispatcher(dispatcher, { pollMs: 100, signal: stop.signal });
    try {
      await live.until(
        (received) => events.every((event) => received.some((got) => got.id === event.id)),
        45_000,
      );
      // The dead endpoint got its capped share of attempts, and not one of them has ended.
      expect(dead.hung.length).toBeGreaterThan(0);
      expect(dead.hung.length).toBeLessThanOrEqual(8);
      expect(attemptsEnded.filter((id) => id === ids[0])).toEqual([]);
      expect(live.unverified).toEqual([]);
    } finally {
      stop.abort();
      await dead.close();
      await running;
    }
  });
});
