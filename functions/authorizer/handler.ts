import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import type { JWSAlgorithm } from 'jose';
// Subpath imports load a fraction of jose at cold start when the function runs unbundled.
import { createRemoteJWKSet } from 'jose/jwks/remote';
import { jwtVerify } from 'jose/jwt/verify';
import { BEARER_TOKEN_PATTERN } from '#shared/auth/bearer.ts';
import { policyFor } from '#shared/auth/policy.ts';
import { scopesOf } from '#shared/auth/scopes.ts';
import { optionalEnv, requireEnv } from '#shared/config.ts';
import { AUTHORIZER_ROUTE, writeRecord } from '#shared/observability/telemetry.ts';

const issuer = requireEnv('AUTH_ISSUER');
const audience = requireEnv('AUTH_AUDIENCE');
// Amazon Cognito prefixes custom scopes with the resource server id; other providers need none.
const scopePrefix = optionalEnv('AUTH_SCOPE_PREFIX') ?? '';
// Creating the key set fetches nothing: the first token does, and later ones reuse its cache.
const jwks = createRemoteJWKSet(new URL(requireEnv('AUTH_JWKS_URL')), {
  // Stay well inside the authorizer's own timeout, so a hung identity provider costs a 401, not a 500.
  timeoutDuration: 3_000,
});

/**
 * Asymmetric algorithms only: accepting HS* would let anyone who knows the public key (everyone)
 * sign tokens with it as the shared secret, and `none` would accept unsigned tokens.
 */
const ALGORITHMS: JWSAlgorithm[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** Tolerates small clock skew between the identity provider and Lambda in `exp`, `nbf` and `iat`. */
const CLOCK_TOLERANCE_SECONDS = 5;

const BEARER = new RegExp(BEARER_TOKEN_PATTERN);

/** Failures that are about the token itself; any other failure is ours or the identity provider's. */
const TOKEN_FAULTS = new Set([
  'ERR_NO_BEARER_TOKEN',
  'ERR_NO_SUBJECT',
  'ERR_JWT_EXPIRED',
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JWT_INVALID',
  'ERR_JWS_INVALID',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
  'ERR_JWKS_NO_MATCHING_KEY',
]);

class TokenRejected extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
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
  if (token === undefined) throw new TokenRejected('ERR_NO_BEARER_TOKEN', 'No Bearer token');
  const { payload } = await jwtVerify(token, jwks, {
    issuer,
    algorithms: ALGORITHMS,
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['exp', 'sub'],
  });
  if (!isForUs(payload)) {
    throw new TokenRejected('ERR_JWT_CLAIM_VALIDATION_FAILED', 'unexpected "aud" claim value');
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new TokenRejected('ERR_NO_SUBJECT', 'The "sub" claim is not a non-empty string');
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

/** One JSON line per rejection; jose's messages name the failed check, never the token's content. */
function logRejection(error: unknown): void {
  const { code, claim, message, cause } = (error ?? {}) as {
    code?: unknown;
    claim?: unknown;
    message?: unknown;
    cause?: { code?: unknown; message?: unknown };
  };
  const tokenFault = typeof code === 'string' && TOKEN_FAULTS.has(code);
  const outcome = tokenFault ? 'invalid-token' : 'verification-error';
  writeRecord(
    tokenFault ? 'WARN' : 'ERROR',
    tokenFault ? 'Token rejected' : 'Token could not be verified',
    {
      route: AUTHORIZER_ROUTE,
      outcome,
      reason: typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown',
      ...(typeof claim === 'string' ? { claim } : {}),
      detail: typeof message === 'string' ? message : String(error),
      ...(cause?.code !== undefined || cause?.message !== undefined
        ? { cause: String(cause.code ?? cause.message) }
        : {}),
    },
    // Rejections by kind (route × outcome); a verification error is the identity provider failing us.
    new Map([[tokenFault ? 'AuthRejections' : 'AuthErrors', { value: 1, unit: 'Count' as const }]]),
  );
}
