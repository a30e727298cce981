/**
 * Contract between the dispatcher (which decides what to deliver and when) and delivery (which
 * makes one HTTP attempt). See docs/decisions/webhooks.md, "Contract between deriving/dispatch and
 * delivery".
 */

/** One event as it goes out: the same id and bytes on every attempt. */
export interface WebhookMessage {
  /** The event id: the `webhook-id` header, the same on every attempt and every replay. */
  readonly id: string;
  /**
   * The exact JSON text of `{"type","timestamp","data"}` (UTF-8): sent byte for byte and signed
   * over exactly those bytes, never re-serialised.
   */
  readonly body: string;
}

/** Where and how to deliver: what the endpoint store gives the dispatcher. */
export interface DeliveryTarget {
  readonly endpointId: string;
  readonly url: string;
  /**
   * Every secret that signs now (`whsec_…`): one, or two during the 24 h after a rotation (newest
   * first). Each adds a `v1,` signature to the `webhook-signature` header.
   */
  readonly secrets: readonly string[];
}

/**
 * What one attempt came to.
 * - `delivered`: a 2xx answer.
 * - `gone`: 410 Gone; the endpoint is to be disabled (the store does so in `recordAttempt`).
 * - `refused-address`: the URL resolved to an address no request may go to (private, loopback, …);
 *   nothing was sent. A failure like `retry` (DNS may change), but counted apart.
 * - `retry`: anything else (3xx, 4xx, 5xx, timeout, connection error): try again later.
 */
export type AttemptOutcome = 'delivered' | 'retry' | 'gone' | 'refused-address';

/** Why an attempt failed, without its status code; short and stable (shown in the delivery log). */
export type AttemptErrorClass =
  | 'http-status'
  | 'redirect'
  | 'timeout'
  | 'dns'
  | 'connection'
  | 'tls'
  | 'refused-address'
  | 'invalid-url';

export interface AttemptResult {
  readonly outcome: AttemptOutcome;
  /** The answer's status, when one came. */
  readonly statusCode?: number;
  /** Set for every outcome but `delivered`. */
  readonly errorClass?: AttemptErrorClass;
  /** From sending the request to the end of the (bounded) answer, in ms. */
  readonly durationMs: number;
  /** A `Retry-After` of a 429, 502, 503 or 504, in ms (bounded to a day): the next attempt waits at least this long. */
  readonly retryAfterMs?: number;
}

/** One HTTP attempt. Never throws for anything the receiver or the network does. */
export type Deliver = (target: DeliveryTarget, message: WebhookMessage) => Promise<AttemptResult>;
