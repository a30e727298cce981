import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createGetEventHandler } from '#functions/get-event/handler.ts';
import { createListEventsHandler } from '#functions/list-events/handler.ts';
import { createListWebhookDeliveriesHandler } from '#functions/list-webhook-deliveries/handler.ts';
import { createRedeliverEventHandler } from '#functions/redeliver-event/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import {
  createDeliveryEndpointStore,
  createWebhookEndpointStore,
} from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { createEndpointManagement } from '#shared/webhooks/endpoint-functions.ts';
import { EVENT_RETENTION_MS, eventIdOf } from '#shared/webhooks/model/webhook-event.ts';
import { createEnvelopeSealer } from '#shared/webhooks/secrets/envelope.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { storedEvents } from '../support/webhook-events.ts';

/*
 * The events API and the delivery log answer a wallet's events and attempts of the last 30 days,
 * and no older, though DynamoDB's
 * TTL deletes an expired item only within a few days of its `expiresAt` (DynamoDB Local never
 * does): the readers must not show what the TTL has yet to delete.
 */
const client = createDocumentClient();
const tableName = process.env[tables.webhooks.envVar] as string;
const deps = { client, tableName };
const listEvents = createListEventsHandler(deps);
const getEvent = createGetEventHandler(deps);
const redeliver = createRedeliverEventHandler(deps);
const SCOPES = ['read:webhooks', 'write:webhooks', 'read:wallet'];
const DAY_MS = 86_400_000;

/** The ids of a wallet's events `agesMs` old. */
const eventsAged = async (sub: string, agesMs: readonly number[]) =>
  (await storedEvents(deps, sub, agesMs)).map((event) => event.id);

const list = (sub: string, query: string) =>
  invoke(listEvents, apiEvent({ path: '/api/wallet/events', query, sub, scopes: SCOPES }));

describe('the events API past 30 days, before the TTL deletes', () => {
  it('lists only the events of the last 30 days, and ends its pages there', async () => {
    const sub = uniqueSub('retention');
    const [fresh, old] = await eventsAged(sub, [0, 29 * DAY_MS, EVENT_RETENTION_MS + DAY_MS]);
    const all = await list(sub, 'limit=100');
    expect(all.statusCode).toBe(200);
    expect(all.json.items.map((event: { id: string }) => event.id)).toEqual([fresh, old]);
    expect(all.json.nextCursor).toBeUndefined();
    // A page at a time: the page that reaches the expired event is the last.
    const first = await list(sub, 'limit=1');
    const second = await list(sub, `limit=1&cursor=${encodeURIComponent(first.json.nextCursor)}`);
    expect(second.json.items.map((event: { id: string }) => event.id)).toEqual([old]);
    const third = second.json.nextCursor
      ? (await list(sub, `limit=1&cursor=${encodeURIComponent(second.json.nextCursor)}`)).json
      : { items: [] };
    expect([...third.items, ...(third.nextCursor ? ['a cursor past the last event'] : [])]).toEqual([]);
  });

  it('answers 404 for an event past 30 days, read or redelivered', async () => {
    const sub = uniqueSub('retention');
    const [expired] = await eventsAged(sub, [EVENT_RETENTION_MS + 60_000]);
    const read = await invoke(
      getEvent,
      apiEvent({
        path: `/api/wallet/events/${expired}`,
        resource: '/api/wallet/events/{eventId}',
        pathParameters: { eventId: String(expired) },
        sub,
        scopes: SCOPES,
      }),
    );
    expect(read.statusCode).toBe(404);
    const again = await invoke(
      redeliver,
      apiEvent({
        method: 'POST',
        path: `/api/wallet/events/${expired}/redeliver`,
        resource: '/api/wallet/events/{eventId}/redeliver',
        pathParameters: { eventId: String(expired) },
        body: { webhookId: `wh_${'a'.repeat(22)}` },
        sub,
        scopes: SCOPES,
      }),
    );
    expect(again.statusCode).toBe(404);
  });
});

describe('the delivery log past 30 days, before the TTL deletes', () => {
  const store = createWebhookEndpointStore(deps);
  const sealer = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));
  const dispatcherStore = createDeliveryEndpointStore({ ...deps, sealer, clock: { now: Date.now } });
  const listDeliveries = createListWebhookDeliveriesHandler({ store, mode: 'deployed' });

  it('lists only the attempts of the last 30 days, and ends its pages there', async () => {
    const sub = uniqueSub('retention');
    const { endpoint } = await createEndpointManagement({ store, mode: 'deployed', sealer }).create({
      address: sub,
      url: 'https://merchant.example.com/hooks',
    });
    const eventIds: string[] = [];
    for (const age of [0, 29 * DAY_MS, EVENT_RETENTION_MS + DAY_MS]) {
      const eventId = eventIdOf('transfer.received', randomUUID());
      await dispatcherStore.recordAttempt({
        address: sub,
        endpointId: endpoint.id,
        eventId,
        eventType: 'transfer.received',
        attempt: 1,
        attemptedAt: new Date(Date.now() - age).toISOString(),
        outcome: 'delivered',
        statusCode: 204,
        durationMs: 5,
        trigger: 'schedule',
      });
      eventIds.push(eventId);
    }
    const [fresh, old] = eventIds;
    const log = (query: string) =>
      invoke(
        listDeliveries,
        apiEvent({
          path: `/api/wallet/webhooks/${endpoint.id}/deliveries`,
          resource: '/api/wallet/webhooks/{webhookId}/deliveries',
          pathParameters: { webhookId: endpoint.id },
          query,
          sub,
          scopes: SCOPES,
        }),
      );
    const all = await log('limit=100');
    expect(all.statusCode).toBe(200);
    expect(all.json.items.map((attempt: { eventId: string }) => attempt.eventId)).toEqual([fresh, old]);
    expect(all.json.nextCursor).toBeUndefined();
    // A page at a time: the page that reaches the expired attempt is the last.
    const first = await log('limit=1');
    const second = await log(`limit=1&cursor=${encodeURIComponent(first.json.nextCursor)}`);
    expect(second.json.items.map((attempt: { eventId: string }) => attempt.eventId)).toEqual([old]);
    const third = second.json.nextCursor
      ? (await log(`limit=1&cursor=${encodeURIComponent(second.json.nextCursor)}`)).json
      : { items: [] };
    expect([...third.items, ...(third.nextCursor ? ['a cursor past the last attempt'] : [])]).toEqual([]);
  });
});
