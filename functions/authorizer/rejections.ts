import {
  FetchError,
  JwkInvalidKtyError,
  JwkInvalidUseError,
  JwksNotAvailableInCacheError,
  JwksValidationError,
  JwkValidationError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import { TokenError } from 'fast-jwt';
import { AUTHORIZER_ROUTE, logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';
import { JwksStaleError } from './jwks-cache.ts';

/** A check of ours on a token whose signature and standard claims were good. */
export class TokenRejected extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * The identity provider's failures: its JWKS could not be fetched or is unusable. Valid callers
 * are turned away while they last, so they raise an alarm (`AuthErrors`).
 */
const PROVIDER_FAULTS: readonly (readonly [ErrorClass, string])[] = [
  [FetchError, 'jwks-fetch'],
  [JwksValidationError, 'jwks-invalid'],
  [JwkValidationError, 'jwks-invalid'],
  [JwkInvalidUseError, 'jwks-invalid'],
  [JwkInvalidKtyError, 'jwks-invalid'],
  [JwksNotAvailableInCacheError, 'jwks-fetch'],
  [JwksStaleError, 'jwks-stale'],
];

/**
 * The provider faults that leave no trusted key to check any token with: no JWKS could be had
 * (the fetch failed, or failed less than a back-off ago), the document it sent is no JWKS, or the
 * keys held are past their staleness bound. A retry may pass once the provider is back, so these
 * are a 503, never the 401 that tells the caller to drop its token. An unknown `kid` is one of
 * them only while the provider fails: after a JWKS without it, it is the token's fault
 * ({@link UNKNOWN_KEY}). Not the faults of the one key a token names (JwkValidationError,
 * JwkInvalidUseError, JwkInvalidKtyError from `access-token.ts`): any caller can name that key
 * while the provider answers, so those stay a 401 (docs/decisions/authorizer-jwt-libraries.md).
 */
const OUTAGES: readonly ErrorClass[] = [
  FetchError,
  JwksValidationError,
  JwksNotAvailableInCacheError,
  JwksStaleError,
];

/** Whether `error` says the identity provider is failing, not that the token is bad. */
export function isProviderOutage(error: unknown): boolean {
  return OUTAGES.some((type) => error instanceof type);
}

/** A token whose `kid` names no key of the JWKS, even after a fetch. */
const UNKNOWN_KEY: readonly ErrorClass[] = [
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
];

/**
 * What fast-jwt finds wrong with a token, by its error code ({@link TokenRejected} carries its
 * own reason). Counted as `AuthRejections`, no alarm of their own.
 */
const TOKEN_FAULTS: Readonly<Record<string, string>> = {
  FAST_JWT_EXPIRED: 'expired',
  FAST_JWT_INACTIVE: 'not-yet-valid',
  FAST_JWT_INVALID_CLAIM_TYPE: 'claims',
  FAST_JWT_INVALID_CLAIM_VALUE: 'claims',
  FAST_JWT_INVALID_ALGORITHM: 'algorithm',
  FAST_JWT_INVALID_TYPE: 'type',
  FAST_JWT_INVALID_SIGNATURE: 'signature',
  FAST_JWT_MISSING_SIGNATURE: 'signature',
  FAST_JWT_VERIFY_ERROR: 'signature',
  FAST_JWT_MALFORMED: 'malformed',
  FAST_JWT_INVALID_PAYLOAD: 'malformed',
  FAST_JWT_INVALID_CRIT_HEADER: 'malformed',
};

/** Why a token was turned away, or `undefined` when it was not the token's fault. */
function reasonOfTokenFault(error: unknown): string | undefined {
  if (error instanceof TokenRejected) return error.reason;
  if (error instanceof TokenError) return TOKEN_FAULTS[error.code] ?? 'invalid';
  return UNKNOWN_KEY.some((type) => error instanceof type) ? 'unknown-kid' : undefined;
}

const metrics = routeMetrics(AUTHORIZER_ROUTE);

/** A log line per rejection, naming the failed check, never the token itself; and its metric. */
export function logRejection(error: unknown): void {
  const tokenReason = reasonOfTokenFault(error);
  const reason = tokenReason ?? PROVIDER_FAULTS.find(([type]) => error instanceof type)?.[1] ?? 'unexpected';
  const isTokenFault = tokenReason !== undefined;
  const fields = {
    route: AUTHORIZER_ROUTE,
    outcome: isTokenFault ? 'invalid-token' : 'verification-error',
    reason,
    detail: error instanceof Error ? error.message : String(error),
  };
  if (isTokenFault) logger.warn('Token rejected', fields);
  else logger.error('Token could not be verified', fields);
  // A verification error is the identity provider failing us.
  publish(metrics, [[isTokenFault ? 'AuthRejections' : 'AuthErrors', 1]]);
}
