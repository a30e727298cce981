import type { AttemptErrorClass, AttemptOutcome, DeliveryTarget } from './delivery.ts';
import type { EndpointStatus, WebhookEndpoint } from './endpoint.ts';
import type { WebhookEventType } from './event-types.ts';
import type { HealthState } from './health.ts';

/** An endpoint as the dispatcher needs it: where to send, with which secrets, whether to, and its health. */
export interface DeliveryEndpoint extends DeliveryTarget, HealthState {
  readonly address: string;
  readonly eventTypes: readonly WebhookEventType[];
}

/** One attempt, as the dispatcher reports it (and `GET …/deliveries` lists it). */
export interface DeliveryAttempt {
  readonly address: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: WebhookEventType;
  /** 1 for the first attempt of this event at this endpoint; a replay or redelivery starts again at 1. */
  readonly attempt: number;
  /** RFC 3339, UTC: when the request started. */
  readonly attemptedAt: string;
  readonly outcome: AttemptOutcome;
  readonly statusCode?: number;
  readonly errorClass?: AttemptErrorClass;
  readonly durationMs: number;
  /** How this attempt came about: the schedule, a replay or a single redelivery. */
  readonly trigger?: 'schedule' | 'replay' | 'redeliver';
}

/** The endpoint's state after an attempt was recorded: the dispatcher stops retrying a disabled one. */
export interface EndpointHealth {
  readonly status: EndpointStatus;
  readonly disabledReason?: WebhookEndpoint['disabledReason'];
  readonly failingSince?: string;
  /** True when this very attempt disabled the endpoint (`gone`, or 5 days failing): count it in a metric. */
  readonly disabledNow: boolean;
}

/**
 * What the dispatcher needs of the endpoints (implemented by shared/webhooks/dynamodb/). The
 * secrets it returns are already decrypted; they must never be logged.
 */
export interface DeliveryEndpointStore {
  /** The wallet's enabled endpoints subscribed to `eventType` (at most 10), with their current secrets. */
  endpointsFor(address: string, eventType: WebhookEventType): Promise<readonly DeliveryEndpoint[]>;
  /**
   * One endpoint of the wallet, enabled or not (replay and redelivery check it exists and belongs
   * to the wallet: `undefined` otherwise).
   */
  endpointOf(address: string, endpointId: string): Promise<DeliveryEndpoint | undefined>;
  /**
   * Records an attempt in the endpoint's delivery log and updates its health: a `delivered` clears
   * `failingSince`; a failure sets it when unset and disables the endpoint (`failing`) once it is 5
   * days old; `gone` disables it at once. Idempotent per (endpoint, event, attempt, attemptedAt).
   * `seen`: the endpoint's health as the caller read it moments ago; when the attempt changes
   * nothing of it (a delivery to a healthy endpoint, the common case), the endpoint is not read again.
   */
  recordAttempt(attempt: DeliveryAttempt, seen?: HealthState): Promise<EndpointHealth>;
}
