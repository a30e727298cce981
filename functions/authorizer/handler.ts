import { createPublicKey, type JsonWebKey } from 'node:crypto';
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
import {
  assertIsSignatureJwk,
  type Jwk,
  type Jwks,
  type JwkWithKid,
  SimpleJwksCache,
} from 'aws-jwt-verify/jwk';
import type { DecomposedJwt } from 'aws-jwt-verify/jwt';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { type Algorithm, createVerifier, TokenError } from 'fast-jwt';
import { BEARER_TOKEN_PATTERN } from '#shared/auth/bearer.ts';
import { policyFor } from '#shared/auth/policy.ts';
import { scopesOf } from '#shared/auth/scopes.ts';
import { CLOCK_TOLERANCE_SECONDS } from '#shared/auth/token-time.ts';
import { optionalEnv, requireEnv, requireIntegerEnv } from '#shared/config.ts';
import { AUTHORIZER_ROUTE, writeRecord } from '#shared/observability/telemetry.ts';
import { validateAddress } from '#shared/schemas/validators.generated.js';

const issuer = requireEnv('AUTH_ISSUER');
const audience = requireEnv('AUTH_AUDIENCE');
const jwksUri = requireEnv('AUTH_JWKS_URL');
// Amazon Cognito prefixes custom scopes with the resource server id; other providers need none.
const scopePrefix = optionalEnv('AUTH_SCOPE_PREFIX') ?? '';
/** RFC 9068 §4: off only for identity providers that send access tokens without `typ` (Amazon Cognito). */
const requireAtJwtTyp = booleanEnv('AUTH_REQUIRE_AT_JWT_TYP');
/** The longest lifetime (`exp` − `iat`) accepted: a token minted for longer is refused outright. */
const maxLifetimeSeconds = requireIntegerEnv('AUTH_MAX_TOKEN_LIFETIME_SECONDS');

function booleanEnv(name: string): boolean {
  const raw = requireEnv(name);
  if (raw !== 'true' && raw !== 'false') throw new Error(`${name} must be true or false, got "${raw}"`);
  return raw === 'true';
}

/** Stays well inside the authorizer's own timeout, so a hung identity provider costs a 401, not a 500. */
const JWKS_TIMEOUT_MS = 3_000;
/** A key the identity provider withdraws stops being accepted at the latest this long after. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** How long a failed refresh waits before the next try (one fetch, not one per request). */
const JWKS_RETRY_MS = 30_000;

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
        // Counted, not just logged: while refreshes fail, a key the provider withdrew stays trusted
        // and a key it rotated in stays unknown, so a lasting failure raises an alarm.
        writeRecord(
          'WARN',
          'JWKS refresh failed; the keys already held stay in use',
          {
            route: AUTHORIZER_ROUTE,
            outcome: 'jwks-stale',
            reason: 'jwks-refresh',
            detail: error instanceof Error ? error.message : String(error),
          },
          new Map([['JwksRefreshFailures', { value: 1, unit: 'Count' as const }]]),
        );
      }
    }
    return super.getJwk(uri, jwt);
  }

  /**
   * The key of `jwt` straight from a fresh JWKS, or `undefined` when {@link getJwk} must fetch
   * (refresh due, unknown `kid`): nearly every token takes this path, without a promise.
   */
  freshJwk(uri: string, jwt: DecomposedJwt): JwkWithKid | undefined {
    if (Date.now() >= this.#refreshAt) return undefined;
    try {
      return this.getCachedJwk(uri, jwt);
    } catch {
      return undefined;
    }
  }
}

const jwksCache = new ExpiringJwksCache({ fetcher });

/**
 * The algorithms a key of the JWKS verifies, by its type: only asymmetric ones. Accepting HS*
 * would let anyone who knows a public key (everyone) sign tokens with it as the shared secret,
 * and `none` would accept unsigned tokens. A key naming its `alg` verifies that one only.
 */
function algorithmsOf(jwk: Jwk): Algorithm[] {
  const byType: Algorithm[] =
    jwk.kty === 'RSA'
      ? ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
      : jwk.kty === 'EC'
        ? (EC_ALGORITHMS[String(jwk.crv)] ?? [])
        : jwk.kty === 'OKP' && jwk.crv === 'Ed25519'
          ? ['EdDSA']
          : [];
  return jwk.alg === undefined ? byType : byType.filter((algorithm) => algorithm === jwk.alg);
}
const EC_ALGORITHMS: Record<string, Algorithm[]> = {
  'P-256': ['ES256'],
  'P-384': ['ES384'],
  'P-521': ['ES512'],
};

/** The claims of a verified token, as fast-jwt parsed them. */
type Claims = Record<string, unknown>;

/**
 * One fast-jwt verifier per key of the JWKS, made on the key's first token and dropped with the
 * JWKS it came in: it checks the token's algorithm against the key's, its signature with one
 * node:crypto call, `typ`, and `exp`/`nbf` (when present) with {@link CLOCK_TOLERANCE_SECONDS};
 * {@link checkTimes} does the rest.
 */
const verifiers = new WeakMap<JwkWithKid, (token: string) => Claims>();

function verifierFor(jwk: JwkWithKid): (token: string) => Claims {
  let verify = verifiers.get(jwk);
  if (verify === undefined) {
    assertIsSignatureJwk(jwk);
    const algorithms = algorithmsOf(jwk);
    // fast-jwt would take an empty list as "whatever the key allows".
    if (algorithms.length === 0) throw new JwkValidationError(`No accepted algorithm for JWK ${jwk.kid}`);
    const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    verify = createVerifier({
      key: key.export({ type: 'spki', format: 'pem' }).toString(),
      algorithms,
      clockTolerance: CLOCK_TOLERANCE_SECONDS * 1_000,
      // RFC 8725 §3.11 explicit typing, so that no other JWT of the same issuer (an ID token, a
      // logout token) passes for an access token: `at+jwt` (RFC 9068 §4), fast-jwt taking it
      // with or without `application/`, in any case.
      ...(requireAtJwtTyp ? { checkTyp: 'at+jwt' } : {}),
    }) as (token: string) => Claims;
    verifiers.set(jwk, verify);
  }
  return verify;
}

/**
 * Decoded token headers by their text. An identity provider signs every token under the same few
 * headers (`alg`, `kid`, `typ`), so each is decoded once; the cap keeps made-up ones from growing it.
 */
const headers = new Map<string, DecomposedJwt>();
const MAX_HEADERS = 64;

/**
 * The token's header, unverified, only to find its key by `kid` (the verifier then decodes and
 * checks the whole token).
 */
function headerOf(token: string): DecomposedJwt {
  const text = token.slice(0, token.indexOf('.'));
  const known = headers.get(text);
  if (known !== undefined) return known;
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(text, 'base64url').toString());
  } catch {
    // Not base64url JSON: rejected below.
  }
  if (typeof header !== 'object' || header === null) {
    throw new TokenRejected('malformed', 'The token header is not a base64url JSON object');
  }
  const jwt = { header, payload: {} } as DecomposedJwt;
  if (headers.size < MAX_HEADERS) headers.set(text, jwt);
  return jwt;
}

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
  let verified: Verified;
  try {
    verified = await verify(event.authorizationToken);
  } catch (error) {
    logRejection(error);
    throw new Error('Unauthorized');
  }
  // Outside the try on purpose: a malformed methodArn is a gateway misconfiguration, and failing
  // with a 500 says so where a 401 would send the client chasing a token problem it does not have.
  const answer = policyFor(event.methodArn, verified.sub, verified.scopes);
  // API Gateway reuses this answer for its cache TTL whatever the token's `exp`: the functions
  // refuse a request after it themselves (shared/http/handler.ts).
  return { ...answer, context: { ...answer.context, exp: verified.exp } };
};

/** What a good token establishes. */
interface Verified {
  readonly sub: string;
  readonly scopes: ReadonlySet<string>;
  /** NumericDate (seconds) after which, with the clock tolerance, the token is refused. */
  readonly exp: number;
}

async function verify(authorization: string | undefined): Promise<Verified> {
  const token = BEARER.exec(authorization?.trim() ?? '')?.[1];
  if (token === undefined) throw new TokenRejected('no-bearer-token', 'No Bearer token');
  const jwt = headerOf(token);
  const jwk = jwksCache.freshJwk(jwksUri, jwt) ?? (await jwksCache.getJwk(jwksUri, jwt));
  const payload = verifierFor(jwk)(token);
  if (payload.iss !== issuer)
    throw new TokenRejected('issuer', 'The token is not from the identity provider ("iss")');
  const exp = checkTimes(payload);
  if (!isForUs(payload))
    throw new TokenRejected('audience', 'The token is not for this API ("aud"/"client_id")');
  // Amazon Cognito marks its ID tokens `token_use: id`, and signs them with the same keys, for
  // the same issuer and (in `aud`) the same app client id as its access tokens.
  if (payload.token_use !== undefined && payload.token_use !== 'access') {
    throw new TokenRejected('token-use', 'The token is not an access token ("token_use")');
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new TokenRejected('no-subject', 'The "sub" claim is not a non-empty string');
  }
  // The sub is the caller's wallet address (and part of DynamoDB keys): the same rule as any address.
  if (!validateAddress(payload.sub)) {
    throw new TokenRejected('subject', 'The "sub" claim is not a valid wallet address');
  }
  return { sub: payload.sub, scopes: scopesOf(payload, scopePrefix), exp };
}

/**
 * What fast-jwt leaves of the time claims (it checks `exp` and `nbf` only when present, takes
 * `1e400`, which JSON reads as Infinity, for a number, and ignores `iat`): all three finite
 * numbers, `exp` required, `iat` not in the future, and a lifetime no longer than configured,
 * from `iat` (RFC 9068 requires it) or, without one, from `nbf`. Returns `exp`.
 */
function checkTimes(payload: Claims): number {
  const exp = timeClaim(payload, 'exp');
  const nbf = timeClaim(payload, 'nbf');
  const iat = timeClaim(payload, 'iat');
  // A token that never expires is not accepted.
  if (exp === undefined) throw new TokenRejected('no-expiry', 'The token has no "exp" claim');
  if (iat !== undefined && iat * 1000 > Date.now() + CLOCK_TOLERANCE_SECONDS * 1000) {
    throw new TokenRejected('issued-in-future', 'The token was issued in the future ("iat")');
  }
  const start = iat ?? nbf;
  if (start === undefined) {
    throw new TokenRejected('lifetime', 'The token has neither "iat" nor "nbf": its lifetime is unknown');
  }
  if (exp - start > maxLifetimeSeconds) {
    throw new TokenRejected(
      'lifetime',
      `The token lives longer than ${maxLifetimeSeconds} s ("exp" - "iat")`,
    );
  }
  return exp;
}

/** A NumericDate claim: absent, or a finite number of seconds. */
function timeClaim(payload: Claims, name: 'exp' | 'nbf' | 'iat'): number | undefined {
  const value = payload[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TokenRejected('claims', `The "${name}" claim is not a finite number`);
  }
  return value;
}

/**
 * The token is meant for this API: `aud` names it (RFC 9068). Amazon Cognito access tokens carry
 * no `aud`; they name the app client in `client_id`, which then must be the configured audience.
 */
function isForUs(payload: { aud?: unknown; client_id?: unknown }): boolean {
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

/** One JSON line per rejection; the messages name the failed check, never the token itself. */
function logRejection(error: unknown): void {
  const tokenReason = reasonOfTokenFault(error);
  const reason = tokenReason ?? PROVIDER_FAULTS.find(([type]) => error instanceof type)?.[1] ?? 'unexpected';
  const isTokenFault = tokenReason !== undefined;
  writeRecord(
    isTokenFault ? 'WARN' : 'ERROR',
    isTokenFault ? 'Token rejected' : 'Token could not be verified',
    {
      route: AUTHORIZER_ROUTE,
      outcome: isTokenFault ? 'invalid-token' : 'verification-error',
      reason,
      detail: error instanceof Error ? error.message : String(error),
    },
    // Rejections by kind (route × outcome); a verification error is the identity provider failing us.
    new Map([[isTokenFault ? 'AuthRejections' : 'AuthErrors', { value: 1, unit: 'Count' as const }]]),
  );
}
