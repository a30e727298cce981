/**
 * The webhook endpoint contracts (issue 46): bodies of register and change, the endpoint as
 * answered, the delivery log. The bounds are the model's (shared/webhooks/model/endpoint.ts).
 */
import type { FromSchema } from 'json-schema-to-ts';
import { ENDPOINT_LIMITS } from '../webhooks/model/endpoint.ts';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/model/event-types.ts';
import { PRINTABLE_TEXT_PATTERN } from './common.ts';

const endpointUrlSchema = {
  type: 'string',
  minLength: 1,
  maxLength: ENDPOINT_LIMITS.urlLength,
  description:
    'Where events are POSTed: an absolute https URL of a public host (locally, `npm start` also takes http to loopback). No credentials, no fragment; a literal private, loopback, link-local, CGNAT, multicast or unspecified address is refused, and every request is checked again against the address the name resolves to then',
} as const;

const eventTypesSchema = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  // No uniqueItems: its check needs ajv's deep-equal runtime in the standalone code; a type named
  // twice counts once.
  items: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
  description:
    'The events sent to the endpoint (a type named twice counts once); every type when left out at registration',
} as const;

/** Free text for its owner; printable (`PRINTABLE_TEXT_PATTERN`), as a pet's texts are. */
const descriptionSchema = {
  type: 'string',
  maxLength: ENDPOINT_LIMITS.descriptionLength,
  pattern: PRINTABLE_TEXT_PATTERN,
} as const;

const endpointStatusSchema = {
  type: 'string',
  enum: ['enabled', 'disabled'],
  description:
    '`disabled`: no event is sent to it (by its owner, or after a 410 Gone or 5 days of failed deliveries); its missed events stay in the events API and can be replayed',
} as const;

/** Body of `POST /api/wallet/webhooks`. */
export const webhookEndpointCreateSchema = {
  $id: 'WebhookEndpointCreate',
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url: endpointUrlSchema, eventTypes: eventTypesSchema, description: descriptionSchema },
} as const;

export type WebhookEndpointCreate = FromSchema<typeof webhookEndpointCreateSchema>;

/** Body of `PATCH /api/wallet/webhooks/{webhookId}`: a JSON Merge Patch (RFC 7396). */
export const webhookEndpointPatchSchema = {
  $id: 'WebhookEndpointPatch',
  type: 'object',
  additionalProperties: false,
  description:
    'A JSON Merge Patch (RFC 7396): members left out are kept, `description: null` empties the description; `url`, `eventTypes` and `status` cannot be removed, only replaced. Enabling a disabled endpoint clears why it was disabled',
  properties: {
    url: endpointUrlSchema,
    eventTypes: eventTypesSchema,
    description: { anyOf: [descriptionSchema, { type: 'null' }] },
    status: endpointStatusSchema,
  },
} as const;

export type WebhookEndpointPatch = FromSchema<typeof webhookEndpointPatchSchema>;

const endpointProperties = {
  id: { type: 'string', description: 'The endpoint id (`whep_…`)' },
  url: endpointUrlSchema,
  eventTypes: eventTypesSchema,
  description: descriptionSchema,
  status: endpointStatusSchema,
  disabledReason: {
    type: 'string',
    enum: ['manual', 'gone', 'failing'],
    description:
      'Why a disabled endpoint is: its owner disabled it, it answered 410 Gone, or every delivery failed for 5 days',
  },
  failingSince: {
    type: 'string',
    format: 'date-time',
    description: 'The first failed delivery since the last success; absent while deliveries succeed',
  },
  createdAt: { type: 'string', format: 'date-time' },
  updatedAt: { type: 'string', format: 'date-time' },
} as const;

const endpointRequired = [
  'id',
  'url',
  'eventTypes',
  'description',
  'status',
  'createdAt',
  'updatedAt',
] as const;

/** An endpoint as answered: never its secret. */
export const webhookEndpointSchema = {
  $id: 'WebhookEndpoint',
  type: 'object',
  additionalProperties: false,
  required: endpointRequired,
  properties: endpointProperties,
} as const;

/** An endpoint with its new secret: the answer of register and of rotate-secret, the only ones that show it. */
export const webhookEndpointWithSecretSchema = {
  $id: 'WebhookEndpointWithSecret',
  type: 'object',
  additionalProperties: false,
  required: [...endpointRequired, 'secret'],
  properties: {
    ...endpointProperties,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
      description:
        'The signing secret (32 random bytes, base64, Standard Webhooks `whsec_` form): shown in this answer only. After a rotation the previous secret still signs for 24 h beside it',
    },
  },
} as const;

/** Response of `GET /api/wallet/webhooks`. */
export const webhookEndpointListSchema = {
  $id: 'WebhookEndpointList',
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      maxItems: ENDPOINT_LIMITS.perWallet,
      items: {
        type: 'object',
        additionalProperties: false,
        required: endpointRequired,
        properties: endpointProperties,
      },
      description: `The wallet's endpoints, newest first (at most ${ENDPOINT_LIMITS.perWallet})`,
    },
  },
} as const;

/** One delivery attempt in an endpoint's log. */
const deliveryAttemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['eventId', 'eventType', 'attempt', 'attemptedAt', 'outcome', 'durationMs'],
  properties: {
    eventId: { type: 'string', description: 'The event delivered: the `webhook-id` header of the request' },
    eventType: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
    attempt: {
      type: 'integer',
      minimum: 1,
      description: 'The attempt number for this event (a replay starts again at 1)',
    },
    attemptedAt: { type: 'string', format: 'date-time' },
    outcome: { type: 'string', enum: ['delivered', 'retry', 'gone', 'refused-address'] },
    statusCode: {
      type: 'integer',
      minimum: 100,
      maximum: 599,
      description: "The endpoint's answer, when one came",
    },
    errorClass: {
      type: 'string',
      enum: [
        'http-status',
        'redirect',
        'timeout',
        'dns',
        'connection',
        'tls',
        'refused-address',
        'invalid-url',
      ],
      description: 'Why the attempt failed',
    },
    durationMs: { type: 'integer', minimum: 0 },
    trigger: { type: 'string', enum: ['schedule', 'replay', 'redeliver'] },
  },
} as const;

/** Response of `GET /api/wallet/webhooks/{webhookId}/deliveries`. */
export const webhookDeliveryPageSchema = {
  $id: 'WebhookDeliveryPage',
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: { type: 'array', items: deliveryAttemptSchema, description: 'Attempts, newest first' },
    nextCursor: { type: 'string', description: 'Pass as `cursor` for the next page; absent on the last' },
  },
} as const;
