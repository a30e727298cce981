import {
  FetchError,
  JwkInvalidKtyError,
  JwkInvalidUseError,
  JwksNotAvailableInCacheError,
  JwksValidationError,
  JwkValidationError,
  JwtBaseError,
  JwtExpiredError,
  JwtInvalidClaimError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtParseError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  ParameterValidationError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import { type Jwks, type JwkWithKid, SimpleJwksCache } from 'aws-jwt-verify/jwk';
import type { DecomposedJwt } from 'aws-jwt-verify/jwt';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { BEARER_TOKEN_PATTERN } from '#shared/auth/bearer.ts';
import { policyFor } from '#shared/auth/policy.ts';
import { scopesOf } from '#shared/auth/scopes.ts';
import { optionalEnv, requireEnv } from '#shared/config.ts';
import { AUTHORIZER_ROUTE, log, writeRecord } from '#shared/observability/telemetry.ts';

const issuer = requireEnv('AUTH_ISSUER');
const audience = requireEnv('AUTH_AUDIENCE');
const jwksUri = requireEnv('AUTH_JWKS_URL');
// Amazon Cognito prefixes custom scopes with the resource server id; other providers need none.
const scopePrefix = optionalEnv('AUTH_SCOPE_PREFIX') ?? '';

/** Stays well inside the authorizer's own timeout, so a hung identity provider costs a 401, not a 500. */
const JWKS_TIMEOUT_MS = 3_000;
/** A key the identity provider withdraws stops being accepted at the latest this long after. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** How long a failed refresh waits before the next try (one fetch, not one per request). */
const JWKS_RETRY_MS = 30_000;
/** Tolerates small clock skew between the identity provider and Lambda in `exp` and `nbf`. */
const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * aws-jwt-verify's own fetcher speaks only HTTPS; the local gateway's issuer is plain HTTP on
 * loopback, and deployed stages only accept an https `auth:jwksUrl` (`infra/app.ts`).
 */
const fetcher = {
  async fetch(uri: string): Promise<ArrayBuffer> {
    try {
      const response = await fetch(uri, { signal: AbortSignal.timeout(JWKS_TIMEOUT_MS), redirect: 'error' });
      if (!response.ok) throw new FetchError(uri, `status code is ${response.status}, expected 200`);
      return await response.arrayBuffer();
    } catch (error) {
      if (error instanceof FetchError) throw error;
      // fetch says only "fetch failed"; what failed (ECONNREFUSED, a timeout, …) is in its cause.
      const { name, cause } = error as { name?: unknown; cause?: { code?: unknown } };
      throw new FetchError(uri, String(cause?.code ?? name));
    }
  },
};

/**
 * The JWKS as aws-jwt-verify caches it (fetched on first use, again for an unknown `kid`, at most
 * once per 10 s per kid), but also refreshed once it is {@link JWKS_MAX_AGE_MS} old: the library
 * alone would trust a withdrawn key for as long as the Lambda environment lives. A refresh that
 * fails keeps the keys already held and is tried again {@link JWKS_RETRY_MS} later: an identity
 * provider that is down must not lock out every caller whose token it signed with a key we have.
 */
class ExpiringJwksCache extends SimpleJwksCache {
  /** 0 until a JWKS was fetched: until then there are no keys to fall back on. */
  #refreshAt = 0;

  override async getJwks(uri: string): Promise<Jwks> {
    const jwks = await super.getJwks(uri);
    this.#refreshAt = Date.now() + JWKS_MAX_AGE_MS;
    return jwks;
  }

  override async getJwk(uri: string, jwt: DecomposedJwt): Promise<JwkWithKid> {
    if (Date.now() >= this.#refreshAt) {
      try {
        await this.getJwks(uri);
      } catch (error) {
        if (this.#refreshAt === 0) throw error;
        this.#refreshAt = Date.now() + JWKS_RETRY_MS;
        log('WARN', 'JWKS refresh failed; the keys already held stay in use', {
          route: AUTHORIZER_ROUTE,
          reason: 'jwks-refresh',
          detail: error instanceof Error ? error.message : String(error),
        });
      }
    }
    return super.getJwk(uri, jwt);
  }
}

/**
 * Creating the verifier fetches nothing: the first token does, and later ones reuse the cache.
 * Only asymmetric algorithms are accepted (RS256/384/512, ES256/384/512, EdDSA): accepting HS*
 * would let anyone who knows the public key (everyone) sign tokens with it as the shared secret,
 * and `none` would accept unsigned tokens. The audience is checked below, Cognito-style.
 */
const verifier = JwtVerifier.create(
  { issuer, audience: null, jwksUri, graceSeconds: CLOCK_TOLERANCE_SECONDS },
  { jwksCache: new ExpiringJwksCache({ fetcher }) },
);

const BEARER = new RegExp(BEARER_TOKEN_PATTERN);

/** A check of ours on a token whose signature and standard claims were good. */
class TokenRejected extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Lambda TOKEN authorizer of the REST API: verifies the OAuth 2.0 JWT access token of the
 * `Authorization: Bearer` header against the identity provider's JWKS and answers with a policy
 * allowing every route the token's scopes open (see {@link policyFor}). Any failure throws
 * `Error('Unauthorized')`, the one message API Gateway turns into its 401 gateway response.
 */
export const handler = async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  let verified: { sub: string; scopes: Set<string> };
  try {
    verified = await verify(event.authorizationToken);
  } catch (error) {
    logRejection(error);
    throw new Error('Unauthorized');
  }
  // Outside the try on purpose: a malformed methodArn is a gateway misconfiguration, and failing
  // with a 500 says so where a 401 would send the client chasing a token problem it does not have.
  return policyFor(event.methodArn, verified.sub, verified.scopes);
};

async function verify(authorization: string | undefined): Promise<{ sub: string; scopes: Set<string> }> {
  const token = BEARER.exec(authorization?.trim() ?? '')?.[1];
  if (token === undefined) throw new TokenRejected('no-bearer-token', 'No Bearer token');
  const payload = await verifier.verify(token);
  // aws-jwt-verify checks `exp` only when present; a token that never expires is not accepted.
  if (payload.exp === undefined) throw new TokenRejected('no-expiry', 'The token has no "exp" claim');
  if (!isForUs(payload))
    throw new TokenRejected('audience', 'The token is not for this API ("aud"/"client_id")');
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new TokenRejected('no-subject', 'The "sub" claim is not a non-empty string');
  }
  return { sub: payload.sub, scopes: scopesOf(payload, scopePrefix) };
}

/**
 * The token is meant for this API: `aud` names it (RFC 9068). Amazon Cognito access tokens carry
 * no `aud`; they name the app client in `client_id`, which then must be the configured audience.
 */
function isForUs(payload: { aud?: string | string[]; client_id?: unknown }): boolean {
  if (payload.aud === undefined) return payload.client_id === audience;
  return Array.isArray(payload.aud) ? payload.aud.includes(audience) : payload.aud === audience;
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * The identity provider's failures: its JWKS could not be fetched or is unusable. Valid callers
 * get 401 while they last, so they raise an alarm (`AuthErrors`).
 */
const PROVIDER_FAULTS: readonly (readonly [ErrorClass, string])[] = [
  [FetchError, 'jwks-fetch'],
  [JwksValidationError, 'jwks-invalid'],
  [JwkValidationError, 'jwks-invalid'],
  [JwkInvalidUseError, 'jwks-invalid'],
  [JwkInvalidKtyError, 'jwks-invalid'],
  [JwksNotAvailableInCacheError, 'jwks-fetch'],
];

/**
 * What aws-jwt-verify finds wrong with a token ({@link TokenRejected} carries its own reason), most
 * specific first (the bundle is minified: class names do not survive, so the reason is spelt
 * here). Counted as `AuthRejections`, no alarm of their own.
 */
const TOKEN_FAULTS: readonly (readonly [ErrorClass, string])[] = [
  [JwtExpiredError, 'expired'],
  [JwtNotBeforeError, 'not-yet-valid'],
  [JwtInvalidIssuerError, 'issuer'],
  // With one issuer configured, aws-jwt-verify reports another issuer as an unknown configuration.
  [ParameterValidationError, 'issuer'],
  [JwtInvalidClaimError, 'claims'],
  [JwtInvalidSignatureAlgorithmError, 'algorithm'],
  [JwtInvalidSignatureError, 'signature'],
  [JwtWithoutValidKidError, 'unknown-kid'],
  [KidNotFoundInJwksError, 'unknown-kid'],
  [WaitPeriodNotYetEndedJwkError, 'unknown-kid'],
  [JwtParseError, 'malformed'],
  [JwtBaseError, 'invalid'],
];

/** One JSON line per rejection; the messages name the failed check, never the token itself. */
function logRejection(error: unknown): void {
  const provider = PROVIDER_FAULTS.find(([type]) => error instanceof type);
  const token = provider ? undefined : TOKEN_FAULTS.find(([type]) => error instanceof type);
  const tokenFault = error instanceof TokenRejected || token !== undefined;
  const reason = error instanceof TokenRejected ? error.reason : ((provider ?? token)?.[1] ?? 'unexpected');
  writeRecord(
    tokenFault ? 'WARN' : 'ERROR',
    tokenFault ? 'Token rejected' : 'Token could not be verified',
    {
      route: AUTHORIZER_ROUTE,
      outcome: tokenFault ? 'invalid-token' : 'verification-error',
      reason,
      detail: error instanceof Error ? error.message : String(error),
    },
    // Rejections by kind (route × outcome); a verification error is the identity provider failing us.
    new Map([[tokenFault ? 'AuthRejections' : 'AuthErrors', { value: 1, unit: 'Count' as const }]]),
  );
}
