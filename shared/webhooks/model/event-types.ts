/**
 * The kinds of event a wallet is told of (issue 46). One list: the endpoints' `eventTypes` bound,
 * the JSON Schemas' enum and the deriver's output all use it.
 */
export const WEBHOOK_EVENT_TYPES = [
  'transfer.sent',
  'transfer.received',
  'transfer.completed',
  'deposit.received',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
