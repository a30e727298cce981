/**
 * The typed errors of the service. Domain and use-case code throws these and knows nothing of
 * HTTP; `shared/http/error-mapping.ts` is the one table that maps them to status codes, applied by
 * `shared/http/problem-middleware.ts`.
 */

/** One violation of a request contract, located by a JSON Pointer into the body. */
export interface Violation {
  pointer: string;
  detail: string;
}

/**
 * Base of every error meant for the client: its message is safe to show. Mapped to HTTP by
 * class (instanceof), never by name, which bundling minifies.
 */
export abstract class ClientError extends Error {}

/** The body is not JSON, or not a JSON object. */
export class MalformedBodyError extends ClientError {}

/** The request declares a media type the operation does not read. */
export class UnsupportedMediaTypeError extends ClientError {}

/** The request body is larger than the operation takes; nothing was stored. */
export class PayloadTooLargeError extends ClientError {}

/** A path or query parameter is not of the expected form. */
export class InvalidParameterError extends ClientError {}

/** How many violations a 422 lists: the first ones found; `errorCount` says how many there were. */
export const MAX_VIOLATIONS_LISTED = 20;

/** The longest pointer or detail a listed violation keeps (a key of the body may be megabytes long). */
export const MAX_VIOLATION_TEXT = 256;

const clip = (text: string): string =>
  text.length > MAX_VIOLATION_TEXT ? `${text.slice(0, MAX_VIOLATION_TEXT - 1)}…` : text;

/**
 * Well-formed JSON that breaks the contract. Lists the first {@link MAX_VIOLATIONS_LISTED}
 * violations, each of bounded length, and counts them all: a body with a million wrong items
 * still gets a 422 of a few kilobytes.
 */
export class ValidationError extends ClientError {
  readonly violations: readonly Violation[];
  /** How many violations were found, listed or not. */
  readonly errorCount: number;
  constructor(violations: readonly Violation[]) {
    const listed = violations
      .slice(0, MAX_VIOLATIONS_LISTED)
      .map((v) => ({ pointer: clip(v.pointer), detail: clip(v.detail) }));
    const more = violations.length - listed.length;
    super(
      listed.map((v) => `${v.pointer || '/'}: ${v.detail}`).join('; ') +
        (more > 0 ? `; and ${more} more` : ''),
    );
    this.violations = listed;
    this.errorCount = violations.length;
  }
}

/** The caller is not authenticated (no identity from the authorizer). */
export class UnauthenticatedError extends ClientError {}

/** The caller's token lacks a scope the operation requires. */
export class InsufficientScopeError extends ClientError {
  readonly requiredScopes: readonly string[];
  constructor(requiredScopes: readonly string[]) {
    super(`This operation requires the scope ${requiredScopes.join(' ')}`);
    this.requiredScopes = requiredScopes;
  }
}

/** The addressed resource does not exist. */
export class NotFoundError extends ClientError {}

/** The resource already exists; nothing was overwritten. */
export class AlreadyExistsError extends ClientError {}

/** The sender's balance does not cover the amount; nothing changed. */
export class InsufficientFundsError extends ClientError {}

/** The recipient's address has no open wallet; nothing was sent. */
export class UnknownRecipientError extends ClientError {}

/** The caller's address looks like another wallet's (equal UTS #39 skeletons): no wallet opens at it. */
export class LookalikeAddressError extends ClientError {}

/** The credit would take the recipient's balance past the most a wallet holds; nothing changed. */
export class RecipientLimitError extends ClientError {}

/** An Idempotency-Key was reused with a different request body. */
export class IdempotencyKeyReuseError extends ClientError {}

/**
 * The caller's Idempotency-Key already registered a webhook endpoint, with this same request:
 * nothing was registered. Not a replay of that 201: its secret was sealed and this function cannot
 * open it, so the answer names the endpoint and how to get a secret of it (a rotation).
 */
export class WebhookEndpointRegisteredError extends ClientError {
  readonly endpointId: string;
  /** The endpoint, relative to the request URL, as the 201's Location; none if deleted since. */
  readonly location: string | undefined;
  constructor(endpointId: string, location: string | undefined) {
    super(
      location === undefined
        ? `This Idempotency-Key registered the webhook endpoint ${endpointId}, deleted since. Send a new key to register another`
        : `This Idempotency-Key already registered the webhook endpoint ${endpointId} (Location); nothing else was registered. Its signing secret was shown only in that first answer: if you lost it, rotate it (POST ${location}/rotate-secret)`,
    );
    this.endpointId = endpointId;
    this.location = location;
  }
}

/** The wallet already has as many webhook endpoints as it may; nothing was registered. */
export class WebhookEndpointLimitError extends ClientError {}

/** A replay of the endpoint from later than asked is still being sent; nothing was started. */
export class ReplayInProgressError extends ClientError {}

/** The webhook endpoint is disabled, so nothing would reach it; nothing was started. */
export class EndpointDisabledError extends ClientError {}

/** The pet already lists as many photo URLs as a pet may; no image was stored. */
export class PetPhotoLimitError extends ClientError {}

/** A dependency stayed unavailable (throttling, conflicts, timeouts) after bounded retries. */
export class TemporarilyUnavailableError extends Error {
  override readonly name = 'TemporarilyUnavailableError';
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super(message, options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The request's precondition (`If-Match`) does not hold: the resource changed since the caller
 * read it, or is not the one it names; nothing was changed.
 */
export class PreconditionFailedError extends ClientError {}
