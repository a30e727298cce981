import { createHash } from 'node:crypto';
import type { WebhookEventType } from './event-types.ts';

/** How long an event is kept for the events API, replays and redeliveries: 30 days, as Stripe. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * One event of a wallet, as stored and as delivered. `body` is the exact JSON text
 * `{"type","timestamp","data"}` sent and signed on every attempt; the other fields are what the
 * store and the dispatcher need without parsing it.
 */
export interface WebhookEvent {
  /** `evt_…`: derived from the fact, so the same fact read twice is the same event. */
  readonly id: string;
  readonly type: WebhookEventType;
  /** The wallet told. */
  readonly address: string;
  /** RFC 3339: when the fact happened (the body's `timestamp`). */
  readonly timestamp: string;
  readonly body: string;
}

/**
 * The id of the event of `type` about the fact `factKey` (an entry's item key, a transfer's id):
 * the same however often the stream delivers the fact or the deriver restarts, and distinct for
 * distinct facts. 128 bits of SHA-256, so two facts never meet by chance.
 */
export function eventIdOf(type: WebhookEventType, factKey: string): string {
  return `evt_${createHash('sha256').update(`${type}\n${factKey}`).digest('base64url').slice(0, 22)}`;
}

/** An event id as this service makes them: anything else names no event, and costs no read. */
export const EVENT_ID = /^evt_[A-Za-z0-9_-]{22}$/;
