/**
 * The typed errors of the service. Domain and use-case code throws these and knows nothing of
 * HTTP; `shared/http/problem-middleware.ts` is the one place that maps them to status codes.
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

/** A path or query parameter is not of the expected form. */
export class InvalidParameterError extends ClientError {}

/** Well-formed JSON that breaks the contract; carries every violation found. */
export class ValidationError extends ClientError {
  readonly violations: readonly Violation[];
  constructor(violations: readonly Violation[]) {
    super(violations.map((v) => `${v.pointer || '/'}: ${v.detail}`).join('; '));
    this.violations = violations;
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

/** An Idempotency-Key was reused with a different request body. */
export class IdempotencyKeyReuseError extends ClientError {}

/** A dependency stayed unavailable (throttling, conflicts, timeouts) after bounded retries. */
export class TemporarilyUnavailableError extends Error {
  override readonly name = 'TemporarilyUnavailableError';
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super(message, options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
