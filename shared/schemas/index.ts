import { problemSchema } from './common.ts';
import {
  webhookEventPageSchema,
  webhookEventSchema,
  webhookPayloadSchema,
  webhookRedeliverRequestSchema,
  webhookRedeliveryAcceptedSchema,
  webhookReplayAcceptedSchema,
  webhookReplayRequestSchema,
} from './events.ts';
import { apiResponseSchema, petSchema } from './pet.ts';
import {
  addressOnlySchema,
  balanceSchema,
  sendRequestSchema,
  transferDetailsSchema,
  transferHistoryPageSchema,
  transferSchema,
} from './wallet.ts';
import {
  webhookDeliveryPageSchema,
  webhookEndpointCreateSchema,
  webhookEndpointListSchema,
  webhookEndpointPatchSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from './webhooks.ts';

/** Every top-level named schema (Category and Tag travel inside Pet): compiled into standalone validators at build time and published as OpenAPI components. */
export const schemas = [
  problemSchema,
  petSchema,
  apiResponseSchema,
  sendRequestSchema,
  balanceSchema,
  transferSchema,
  transferHistoryPageSchema,
  transferDetailsSchema,
  addressOnlySchema,
  webhookEndpointCreateSchema,
  webhookEndpointPatchSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  webhookEndpointListSchema,
  webhookDeliveryPageSchema,
  webhookEventSchema,
  webhookPayloadSchema,
  webhookEventPageSchema,
  webhookReplayRequestSchema,
  webhookReplayAcceptedSchema,
  webhookRedeliverRequestSchema,
  webhookRedeliveryAcceptedSchema,
] as const;

/** The request bodies, and the token's `sub` (an address), that get a generated validator: export name → schema `$id`. */
export const requestValidators = {
  validatePet: 'Pet',
  validateSendRequest: 'SendRequest',
  validateAddress: 'Address',
  validateWebhookEndpointCreate: 'WebhookEndpointCreate',
  validateWebhookEndpointPatch: 'WebhookEndpointPatch',
  validateWebhookReplayRequest: 'WebhookReplayRequest',
  validateWebhookRedeliverRequest: 'WebhookRedeliverRequest',
} as const;
