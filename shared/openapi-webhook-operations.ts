/**
 * The contracts of the webhook endpoints and the events API (issue 46), apart from the wallet's and
 * the pets' (`openapi-operations.ts` merges them): bodies, parameters, the problem types each
 * function can answer with, and examples.
 */

import { idempotencyKeyParameter } from './http/idempotency-key.ts';
import { type OperationContract, pageParameters } from './openapi-contract.ts';
import { ALICE, BOB } from './openapi-examples.ts';
import type { OperationId } from './routes.ts';
import { MAX_CURSOR_LENGTH as DELIVERY_CURSOR_LENGTH } from './webhooks/dynamodb/endpoint-store.ts';
import { MAX_CURSOR_LENGTH as EVENT_CURSOR_LENGTH } from './webhooks/dynamodb/event-store.ts';
import { WEBHOOK_EVENT_TYPES } from './webhooks/model/event-types.ts';

const WEBHOOK_EXAMPLE = {
  id: 'whep_Q2hlY2tvdXRIb29rczAx',
  url: 'https://merchant.example.com/webhooks',
  eventTypes: ['transfer.received', 'transfer.completed'],
  description: 'Order fulfilment',
  status: 'enabled',
  createdAt: '2026-01-02T03:04:05.678Z',
  updatedAt: '2026-01-02T03:04:05.678Z',
};
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9Z0A4ch8sEM=';

const WEBHOOK_ID_PARAMETER = {
  name: 'webhookId',
  in: 'path',
  required: true,
  schema: { type: 'string', maxLength: 64 },
  description: 'The endpoint id (`whep_…`); 404 unless it is one of your endpoints',
  example: WEBHOOK_EXAMPLE.id,
};

/** An event as the events API lists it and, without its `id` (the `webhook-id` header), as a delivery's body. */
export const EVENT_EXAMPLE = {
  id: 'evt_Yk3mQ9xT2LwV8cR1pN6sAa',
  type: 'transfer.completed',
  timestamp: '2026-01-02T03:04:05.912Z',
  data: {
    transferId: '5f0c2b1e-8a7d-4c3b-9e6f-1a2b3c4d5e6f',
    address: BOB,
    counterparty: ALICE,
    direction: 'in',
    amount: 12.34,
    currency: 'USD',
    status: 'completed',
    createdAt: '2026-01-02T03:04:05.678Z',
    reference: 'INV-2026-0042',
    metadata: { orderId: 'ord_8812' },
    seq: 42,
    balanceAfter: 1012.34,
  },
};

const EVENT_ID_PARAMETER = {
  name: 'eventId',
  in: 'path',
  required: true,
  schema: { type: 'string', maxLength: 64 },
  description:
    'The event id (`evt_…`, the `webhook-id` of its deliveries); 404 unless it is an event of your wallet',
  example: EVENT_EXAMPLE.id,
};

type WebhookOperationId = Extract<
  OperationId,
  | 'createWebhook'
  | 'listWebhooks'
  | 'getWebhook'
  | 'updateWebhook'
  | 'deleteWebhook'
  | 'rotateWebhookSecret'
  | 'listWebhookDeliveries'
  | 'replayWebhook'
  | 'listEvents'
  | 'getEvent'
  | 'redeliverEvent'
>;

export const webhookOperationContracts: Record<WebhookOperationId, OperationContract> = {
  createWebhook: {
    tag: 'webhooks',
    requestBody: 'WebhookEndpointCreate',
    requestExample: {
      url: 'https://merchant.example.com/webhooks',
      eventTypes: ['transfer.received', 'transfer.completed'],
      description: 'Order fulfilment',
    },
    success: {
      status: 201,
      schema: 'WebhookEndpointWithSecret',
      description:
        'The endpoint, with its signing secret: keep it, no later answer shows it. `Location` names the endpoint. A wallet has at most 10 endpoints (422 webhook-endpoint-limit); a URL that is not https, or names a private, loopback, link-local, CGNAT, multicast or unspecified address, is a 422',
      headers: [{ name: 'Location', required: true }],
      example: { ...WEBHOOK_EXAMPLE, secret: SECRET_EXAMPLE },
    },
    problems: [
      'malformed-body',
      'unsupported-media-type',
      'validation-failed',
      'webhook-endpoint-limit',
      'webhook-endpoint-registered',
      'idempotency-key-reused',
      'temporarily-unavailable',
    ],
    parameters: [
      idempotencyKeyParameter(
        "Makes a registration safe to retry: the caller's same key with the same request (the same endpoint: URL, event types in any order, description) registers nothing more and answers 409 webhook-endpoint-registered, naming the endpoint the first request registered (`endpointId`, `Location`). Its signing secret is not shown again: if the first answer was lost, rotate it (`POST webhooks/{webhookId}/rotate-secret`). With another request, 422 idempotency-key-reused. The same syntax as sendMoney's key; kept as long (at least 24 hours).",
        'c2f7a9e1-register-orders-hook',
      ),
    ],
  },
  listWebhooks: {
    tag: 'webhooks',
    success: {
      status: 200,
      schema: 'WebhookEndpointList',
      description: "Your wallet's endpoints, newest first, without their secrets",
      example: { items: [WEBHOOK_EXAMPLE] },
    },
    problems: ['temporarily-unavailable'],
  },
  getWebhook: {
    tag: 'webhooks',
    success: {
      status: 200,
      schema: 'WebhookEndpoint',
      description: 'The endpoint, without its secret',
      example: WEBHOOK_EXAMPLE,
    },
    problems: ['not-found', 'temporarily-unavailable'],
    parameters: [WEBHOOK_ID_PARAMETER],
  },
  updateWebhook: {
    tag: 'webhooks',
    requestBody: 'WebhookEndpointPatch',
    requestMediaTypes: ['application/merge-patch+json', 'application/json'],
    requestExample: { status: 'enabled', description: null },
    success: {
      status: 200,
      schema: 'WebhookEndpoint',
      description: 'The endpoint as changed',
      example: WEBHOOK_EXAMPLE,
    },
    problems: [
      'malformed-body',
      'unsupported-media-type',
      'validation-failed',
      'not-found',
      'temporarily-unavailable',
    ],
    parameters: [WEBHOOK_ID_PARAMETER],
  },
  deleteWebhook: {
    tag: 'webhooks',
    success: { status: 204, description: 'Deleted; nothing more is sent to it' },
    problems: ['not-found', 'temporarily-unavailable'],
    parameters: [WEBHOOK_ID_PARAMETER],
  },
  rotateWebhookSecret: {
    tag: 'webhooks',
    success: {
      status: 200,
      schema: 'WebhookEndpointWithSecret',
      description:
        'The endpoint with its new secret, shown in this answer only. For 24 h every delivery carries a signature by the new and by the previous secret, so a receiver can switch without missing one. A rotation asked again (its answer lost) leaves the earlier secrets signing until their own 24 h end; three sign at most',
      example: { ...WEBHOOK_EXAMPLE, secret: SECRET_EXAMPLE },
    },
    problems: ['not-found', 'temporarily-unavailable'],
    parameters: [WEBHOOK_ID_PARAMETER],
  },
  listWebhookDeliveries: {
    tag: 'webhooks',
    success: {
      status: 200,
      schema: 'WebhookDeliveryPage',
      description:
        "The endpoint's delivery attempts of the last 30 days, newest first: event, attempt number, time, status code or error class, duration",
      example: {
        items: [
          {
            eventId: 'evt_2b7d9e0f6a133f1c2a6e8d4b4c7e9a51',
            eventType: 'transfer.received',
            attempt: 2,
            attemptedAt: '2026-01-02T03:04:10.678Z',
            outcome: 'delivered',
            statusCode: 200,
            durationMs: 84,
            trigger: 'schedule',
          },
          {
            eventId: 'evt_2b7d9e0f6a133f1c2a6e8d4b4c7e9a51',
            eventType: 'transfer.received',
            attempt: 1,
            attemptedAt: '2026-01-02T03:04:05.702Z',
            outcome: 'retry',
            statusCode: 503,
            errorClass: 'http-status',
            durationMs: 41,
            trigger: 'schedule',
          },
        ],
      },
    },
    problems: ['invalid-parameter', 'not-found', 'temporarily-unavailable'],
    parameters: [
      WEBHOOK_ID_PARAMETER,
      ...pageParameters('Deliveries', {
        maxLength: DELIVERY_CURSOR_LENGTH,
        description: "The previous page's nextCursor; one of another endpoint is a 400",
      }),
    ],
  },
  replayWebhook: {
    tag: 'webhooks',
    requestBody: 'WebhookReplayRequest',
    requestExample: { since: '2026-01-01T00:00:00Z' },
    success: {
      status: 202,
      schema: 'WebhookReplayAccepted',
      description:
        'Every event of your wallet since `since` (at most 30 days ago) that the endpoint takes goes to it again, each with its own id and a new schedule of attempts; the deliveries start about 2 s after the request (so that events still being stored as the endpoint was enabled or registered are among them). A disabled endpoint is sent nothing: enable it first (a 409 endpoint-disabled until then). An endpoint has one replay at a time: while one since no later than `since`, and not yet sent that far, is being sent (asked since the endpoint was last enabled or moved), the answer is that replay (its `replayId` and `since`) and nothing more is sent; while another is, the answer is a 409 replay-in-progress',
      example: { replayId: 'rpl_5f0c2b1e-8a7d-4c3b-9e6f-1a2b3c4d5e6f', since: '2026-01-01T00:00:00.000Z' },
    },
    problems: [
      'malformed-body',
      'unsupported-media-type',
      'validation-failed',
      'not-found',
      'replay-in-progress',
      'endpoint-disabled',
      'temporarily-unavailable',
    ],
    parameters: [WEBHOOK_ID_PARAMETER],
  },
  listEvents: {
    tag: 'webhooks',
    success: {
      status: 200,
      schema: 'WebhookEventPage',
      description:
        "Your wallet's events of the last 30 days, newest first, whether or not an endpoint took them: each as its deliveries' body, with the `id` they carry as `webhook-id`",
      example: { items: [EVENT_EXAMPLE] },
    },
    problems: ['invalid-parameter', 'temporarily-unavailable'],
    parameters: [
      {
        name: 'type',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
        description: 'Only events of this type',
      },
      ...pageParameters('Events', {
        maxLength: EVENT_CURSOR_LENGTH,
        description: "The previous page's nextCursor; one of another wallet is a 400",
      }),
    ],
  },
  getEvent: {
    tag: 'webhooks',
    success: { status: 200, schema: 'WebhookEvent', description: 'The event', example: EVENT_EXAMPLE },
    problems: ['not-found', 'temporarily-unavailable'],
    parameters: [EVENT_ID_PARAMETER],
  },
  redeliverEvent: {
    tag: 'webhooks',
    requestBody: 'WebhookRedeliverRequest',
    requestExample: { webhookId: WEBHOOK_EXAMPLE.id },
    success: {
      status: 202,
      schema: 'WebhookRedeliveryAccepted',
      description:
        'The event goes to the endpoint again, with the same `webhook-id`, on a new schedule of attempts, whatever its earlier deliveries; an endpoint that is not yours is a 422 naming `webhookId`, a disabled one a 409 endpoint-disabled (enable it first)',
      example: { eventId: EVENT_EXAMPLE.id, webhookId: WEBHOOK_EXAMPLE.id },
    },
    problems: [
      'malformed-body',
      'unsupported-media-type',
      'validation-failed',
      'not-found',
      'endpoint-disabled',
      'temporarily-unavailable',
    ],
    parameters: [EVENT_ID_PARAMETER],
  },
};
