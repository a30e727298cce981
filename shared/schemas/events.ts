import type { FromSchema } from 'json-schema-to-ts';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/model/event-types.ts';
import { metadataSchema, referenceSchema } from './wallet.ts';

/** An event id: the `webhook-id` of every delivery of the event. */
const eventIdSchema = {
  type: 'string',
  pattern: '^evt_[A-Za-z0-9_-]{22}$',
  description:
    'The event id: the `webhook-id` header of every delivery of this event, the same on every retry, replay and redelivery. Derived from the fact it tells, so the same fact is never two events: receivers deduplicate on it',
} as const;

const eventTypeSchema = {
  type: 'string',
  enum: WEBHOOK_EVENT_TYPES,
  description:
    '`transfer.sent` (to the payer), `transfer.received` (to the recipient, when the payment is accepted, with its status), `transfer.completed` (to the recipient, when the money is spendable), `deposit.received`',
} as const;

/** What an event tells: the movement, seen from the wallet told. */
const eventDataSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['transferId', 'address', 'direction', 'amount', 'currency', 'status', 'createdAt'],
  properties: {
    transferId: {
      type: 'string',
      description: 'Looks the movement up at /api/wallet/transfers/{transferId}',
    },
    address: { type: 'string', description: 'The wallet told: the endpoint owner’s' },
    counterparty: { type: 'string', description: 'The other wallet; absent for a deposit' },
    direction: { type: 'string', enum: ['in', 'out'] },
    amount: {
      type: 'number',
      exclusiveMinimum: 0,
      description: 'Exact decimal in the major unit of the currency',
    },
    currency: { type: 'string' },
    status: {
      type: 'string',
      enum: ['pending', 'completed'],
      description:
        '`pending`: paid, not yet spendable by the recipient (a `transfer.completed` follows); `completed`: spendable',
    },
    createdAt: { type: 'string', format: 'date-time', description: 'When the payment or deposit was made' },
    reference: referenceSchema,
    metadata: metadataSchema,
    seq: {
      type: 'integer',
      minimum: 1,
      description:
        "Events that record an entry of the wallet (`transfer.sent`, `transfer.completed`, `deposit.received`): that entry's number. A wallet's entries are numbered 1, 2, 3, … without gaps: a receiver that sees 41 and then 43 knows it missed 42 (fetch it from the history, or the events API)",
    },
    balanceAfter: {
      type: 'number',
      description: "With `seq`: the wallet's balance just after that entry, exact decimal",
    },
  },
} as const;

/** One event: what a delivery's body holds, with its id (the `webhook-id` header). */
export const webhookEventSchema = {
  $id: 'WebhookEvent',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'timestamp', 'data'],
  properties: {
    id: eventIdSchema,
    type: eventTypeSchema,
    timestamp: { type: 'string', format: 'date-time', description: 'When the fact happened' },
    data: eventDataSchema,
  },
} as const;

export type WebhookEventJson = FromSchema<typeof webhookEventSchema>;

/**
 * A delivery's body: the event without its id, which travels in the `webhook-id` header (Standard
 * Webhooks 1.0). Described in the document's `webhooks`.
 */
export const webhookPayloadSchema = {
  $id: 'WebhookPayload',
  type: 'object',
  additionalProperties: false,
  required: ['type', 'timestamp', 'data'],
  properties: {
    type: eventTypeSchema,
    timestamp: webhookEventSchema.properties.timestamp,
    data: eventDataSchema,
  },
} as const;

/** Response of `GET /api/wallet/events`. */
export const webhookEventPageSchema = {
  $id: 'WebhookEventPage',
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: { type: 'array', maxItems: 100, items: webhookEventSchema },
    nextCursor: {
      type: 'string',
      maxLength: 400,
      description:
        'Pass as `cursor` for the next (older) page; absent on the last page. A page filtered by `type` may be short, even empty, and still have one',
    },
  },
} as const;

/** Body of `POST /api/wallet/webhooks/{webhookId}/replay`. */
export const webhookReplayRequestSchema = {
  $id: 'WebhookReplayRequest',
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    since: {
      type: 'string',
      format: 'date-time',
      maxLength: 40,
      description:
        'RFC 3339 date-time: every event of the wallet from then on (at most 30 days ago) goes to the endpoint again, if it takes its type',
    },
  },
} as const;

export type WebhookReplayRequest = FromSchema<typeof webhookReplayRequestSchema>;

/** Body of `POST /api/wallet/events/{eventId}/redeliver`. */
export const webhookRedeliverRequestSchema = {
  $id: 'WebhookRedeliverRequest',
  type: 'object',
  additionalProperties: false,
  required: ['webhookId'],
  properties: {
    webhookId: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The endpoint to deliver the event to again',
    },
  },
} as const;

export type WebhookRedeliverRequest = FromSchema<typeof webhookRedeliverRequestSchema>;

/** The 202 of a replay: what was started. */
export const webhookReplayAcceptedSchema = {
  $id: 'WebhookReplayAccepted',
  type: 'object',
  additionalProperties: false,
  required: ['replayId', 'since'],
  properties: {
    replayId: { type: 'string', description: 'Names this replay in the logs' },
    since: { type: 'string', format: 'date-time', description: '`since` as understood, in UTC' },
  },
} as const;

/** The 202 of a redelivery. */
export const webhookRedeliveryAcceptedSchema = {
  $id: 'WebhookRedeliveryAccepted',
  type: 'object',
  additionalProperties: false,
  required: ['eventId', 'webhookId'],
  properties: { eventId: eventIdSchema, webhookId: { type: 'string' } },
} as const;
