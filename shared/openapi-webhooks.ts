/**
 * The OpenAPI 3.1 `webhooks` of the document: what the service POSTs to a merchant's endpoint, one
 * entry per event type (shared/webhooks/model/event-types.ts), the body as `WebhookPayload`.
 */
import { EVENT_EXAMPLE } from './openapi-webhook-operations.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks/model/event-types.ts';
import { MAX_RETRY_DELAY_MS, RETRY_AFTER_STATUSES } from './webhooks/model/retry-schedule.ts';

const SUMMARIES: Record<WebhookEventType, string> = {
  'transfer.sent': "Your wallet paid another: the payer's entry, with its seq and balanceAfter",
  'transfer.received':
    'A payment to your wallet was accepted: `completed` when credited at once, `pending` when in transit (a transfer.completed follows)',
  'transfer.completed': 'A payment to your wallet is spendable: your entry, with its seq and balanceAfter',
  'deposit.received': 'Your wallet was funded: your entry, with its seq and balanceAfter',
};

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  schema: { type: 'string' },
  description,
  example,
});

function exampleOf(type: WebhookEventType) {
  const { id: _id, data, ...rest } = EVENT_EXAMPLE;
  const { seq, balanceAfter, ...withoutEntry } = data;
  const entry = type === 'transfer.received' ? {} : { seq, balanceAfter };
  const side =
    type === 'transfer.sent'
      ? { direction: 'out', address: data.counterparty, counterparty: data.address }
      : type === 'deposit.received'
        ? { counterparty: undefined }
        : {};
  return { ...rest, type, data: JSON.parse(JSON.stringify({ ...withoutEntry, ...side, ...entry })) };
}

export function webhookDescriptions() {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook-${type.replace('.', '-')}`,
          tags: ['webhooks'],
          // The receiver knows the sender by its signature (webhook-signature), not by a token.
          security: [],
          summary: SUMMARIES[type],
          description: `POSTed to each enabled endpoint of the wallet subscribed to this type, at least once, always with the same \`webhook-id\` (deduplicate on it). The body is signed byte for byte: verify it before parsing, e.g. with the \`standardwebhooks\` library. Answer 2xx within 15 s; anything else is retried at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (±20 %). A ${[...RETRY_AFTER_STATUSES].join(', ')} with \`Retry-After\` (seconds or an HTTP date) puts the next attempt no sooner than it asks, and no later than ${MAX_RETRY_DELAY_MS / 3_600_000} h. Redirects are not followed: a 3xx is a failed attempt, retried as any other. 410 disables the endpoint.`,
          parameters: [
            header('webhook-id', 'The event id: the same on every attempt', EVENT_EXAMPLE.id),
            header('webhook-timestamp', "This attempt's time, Unix seconds", '1767323046'),
            header(
              'webhook-signature',
              '`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, space-separated: two during the 24 h after a secret rotation',
              'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            ),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { $ref: '#/components/schemas/WebhookPayload' },
                example: exampleOf(type),
              },
            },
          },
          responses: {
            '2XX': { description: 'Received: not delivered again' },
            '410': {
              description: 'Gone: the endpoint is disabled, its events stay in the events API for a replay',
            },
          },
        },
      },
    ]),
  );
}
