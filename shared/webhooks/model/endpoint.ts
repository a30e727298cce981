import type { WebhookEventType } from './event-types.ts';

/** Bounds of an endpoint (issue 46); the JSON Schemas repeat them, test/unit checks they agree. */
export const ENDPOINT_LIMITS = {
  /** Endpoints one wallet may register. */
  perWallet: 10,
  urlLength: 2048,
  descriptionLength: 256,
} as const;

/** How long an endpoint may fail without a single success before it is disabled (as Svix does). */
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

/** How long a rotated-out secret still signs beside its successor. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * The most secrets that sign at once: the current one and two rotated out within the last 24 h. A
 * rotation retried after its answer was lost is a second one, and must leave the secret the
 * receiver still holds; a third within the day drops the oldest.
 */
export const SIGNING_SECRETS_MAX = 3;

export type EndpointStatus = 'enabled' | 'disabled';

/**
 * Why an endpoint is disabled: its owner did it (`manual`), it answered 410 Gone (`gone`), or it
 * failed every attempt for 5 days (`failing`).
 */
export type DisabledReason = 'manual' | 'gone' | 'failing';

/** An endpoint as its owner sees it: never its secret. */
export interface WebhookEndpoint {
  /** `whep_…`, unguessable; unique across wallets. */
  readonly id: string;
  /** The wallet (the token's `sub`) whose events it receives. */
  readonly address: string;
  readonly url: string;
  /** Never empty: registering without a list subscribes to every type. */
  readonly eventTypes: readonly WebhookEventType[];
  readonly description: string;
  readonly status: EndpointStatus;
  /** RFC 3339, UTC. */
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Set while `status` is `disabled`. */
  readonly disabledReason?: DisabledReason;
  /** RFC 3339: the first failure since the last success; absent while the endpoint is healthy. */
  readonly failingSince?: string;
}
