import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCreateWebhookHandler } from '#functions/create-webhook/handler.ts';
import { createDeleteWebhookHandler } from '#functions/delete-webhook/handler.ts';
import { createGetEventHandler } from '#functions/get-event/handler.ts';
import { createGetWebhookHandler } from '#functions/get-webhook/handler.ts';
import { createListEventsHandler } from '#functions/list-events/handler.ts';
import { createListWebhookDeliveriesHandler } from '#functions/list-webhook-deliveries/handler.ts';
import { createListWebhooksHandler } from '#functions/list-webhooks/handler.ts';
import { createRedeliverEventHandler } from '#functions/redeliver-event/handler.ts';
import { createReplayWebhookHandler } from '#functions/replay-webhook/handler.ts';
import { createRotateWebhookSecretHandler } from '#functions/rotate-webhook-secret/handler.ts';
import { createUpdateWebhookHandler } from '#functions/update-webhook/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { type OperationId, routes } from '#shared/routes.ts';
import { createWebhookEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { createEventStore } from '#shared/webhooks/dynamodb/event-store.ts';
import { createEndpointManagement } from '#shared/webhooks/endpoint-functions.ts';
import { eventIdOf } from '#shared/webhooks/model/webhook-event.ts';
import { createEnvelopeSealer } from '#shared/webhooks/secrets/envelope.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';
import { proxyEvent } from '../../bench/lambda-events.ts';
import { BENCH_ITEMS, DYNAMODB_CALLS, routeRequest, successStatus } from '../../bench/workload.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { proxiedClient, startFaultProxy } from '../support/faults.ts';
import { roundTripCounter } from '../support/round-trips.ts';

/*
 * The round trips of the webhook endpoints and the events API (test/support/round-trips.ts) for
 * the very requests `npm run bench` sends (bench/workload.ts), each on the caller's own endpoint
 * and event: they must succeed with the route's status and make the calls the bench's cost model
 * takes them to (`DYNAMODB_CALLS`). The endpoint and the event are written straight to DynamoDB
 * Local, past the proxy. Endpoints are https to a name no test resolves, and disabled: nothing is
 * delivered, here or by another test's dispatcher.
 */
const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
const tableName = process.env[tables.webhooks.envVar] as string;
const sealer = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));
const direct = { client: createDocumentClient(), tableName };
const endpoints = { store: createWebhookEndpointStore({ client, tableName }), mode: 'deployed' as const };
const events = { client, tableName };
const handlers = {
  'create-webhook': createCreateWebhookHandler({ ...endpoints, sealer }),
  'list-webhooks': createListWebhooksHandler(endpoints),
  'get-webhook': createGetWebhookHandler(endpoints),
  'update-webhook': createUpdateWebhookHandler(endpoints),
  'delete-webhook': createDeleteWebhookHandler(endpoints),
  'rotate-webhook-secret': createRotateWebhookSecretHandler({ ...endpoints, sealer }),
  'list-webhook-deliveries': createListWebhookDeliveriesHandler(endpoints),
  'replay-webhook': createReplayWebhookHandler(events),
  'list-events': createListEventsHandler(events),
  'get-event': createGetEventHandler(events),
  'redeliver-event': createRedeliverEventHandler(events),
};
const roundTripsOf = roundTripCounter(proxy);

/** A wallet with one endpoint and one event, stored. */
async function merchant() {
  const sub = uniqueSub('merchant');
  // On loopback, where nothing listens (the discard port), as `npm start` allows: the replay's
  // and the redelivery's tasks may reach another test's dispatcher, which then looks no name up
  // and sends nothing past this machine. Enabled: a disabled endpoint's replay is a 409.
  const management = createEndpointManagement({
    store: createWebhookEndpointStore(direct),
    mode: 'local',
    sealer,
  });
  const { endpoint } = await management.create({ address: sub, url: 'http://127.0.0.1:9/hooks' });
  const eventId = eventIdOf('transfer.received', randomUUID());
  const timestamp = new Date().toISOString();
  const event = {
    id: eventId,
    type: 'transfer.received' as const,
    address: sub,
    timestamp,
    body: JSON.stringify({ type: 'transfer.received', timestamp, data: { address: sub } }),
  };
  expect(await createEventStore(direct).recordAll([{ event, endpointIds: [] }])).toEqual(['recorded']);
  return { sub, own: { ...BENCH_ITEMS, endpointId: endpoint.id, eventId } };
}

/** The bench's request of `dir` by a merchant of its own: its calls, checked against the route's grant. */
async function benchRequest(dir: keyof typeof handlers) {
  const { sub, own } = await merchant();
  const route = routes.find((r) => r.functionDir === dir);
  const request = routeRequest(dir, sub, 'token', own);
  const sent = await roundTripsOf(
    route?.operationId as OperationId,
    () => invoke(handlers[dir], proxyEvent(request)),
    { status: successStatus(dir) },
  );
  // Calls made at once may leave in either order; these routes make none at once.
  expect(sent).toEqual(DYNAMODB_CALLS[dir]);
  return sent;
}

describe("the webhook routes' round trips for the bench's requests, each exactly covered by its route's grant", () => {
  it('register, change, delete, rotate: a read of the endpoint set, then its write under its version, in a transaction for its token', async () => {
    for (const dir of [
      'create-webhook',
      'update-webhook',
      'delete-webhook',
      'rotate-webhook-secret',
    ] as const) {
      expect(await benchRequest(dir)).toEqual(['GetItem', 'TransactWriteItems']);
    }
  });

  it('register with an Idempotency-Key: the same two calls, each a transaction taking the key record too; its replay, the read alone', async () => {
    const { sub } = await merchant();
    const key = randomUUID();
    const request = () =>
      invoke(
        handlers['create-webhook'],
        apiEvent({
          method: 'POST',
          path: '/api/wallet/webhooks',
          sub,
          scopes: ['write:webhooks', 'read:wallet'],
          body: { url: 'https://merchant.example.com/hooks' },
          headers: { 'Idempotency-Key': key },
        }),
      );
    expect(await roundTripsOf('createWebhook', request, { status: 201 })).toEqual([
      'TransactGetItems',
      'TransactWriteItems',
    ]);
    expect(await roundTripsOf('createWebhook', request, { status: 409, part: true })).toEqual([
      'TransactGetItems',
    ]);
  });

  it('list and read endpoints: one read of the endpoint set', async () => {
    expect(await benchRequest('list-webhooks')).toEqual(['GetItem']);
    expect(await benchRequest('get-webhook')).toEqual(['GetItem']);
  });

  it("an endpoint's deliveries: the endpoint set, then one Query of its log", async () => {
    expect(await benchRequest('list-webhook-deliveries')).toEqual(['GetItem', 'Query']);
  });

  it("a replay: the endpoint set, then the replay's task", async () => {
    expect(await benchRequest('replay-webhook')).toEqual(['GetItem', 'PutItem']);
  });

  it('events: one Query for a page the wallet has fewer events than, one read for one event', async () => {
    expect(await benchRequest('list-events')).toEqual(['Query']);
    expect(await benchRequest('get-event')).toEqual(['GetItem']);
  });

  it("a redelivery: the event, the endpoint set, then the delivery's task", async () => {
    expect(await benchRequest('redeliver-event')).toEqual(['GetItem', 'GetItem', 'PutItem']);
  });
});
