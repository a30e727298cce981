import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { JwkValidationError } from 'aws-jwt-verify/error';
import { assertIsSignatureJwk, type Jwk, type JwkWithKid } from 'aws-jwt-verify/jwk';
import type { DecomposedJwt } from 'aws-jwt-verify/jwt';
import { type Algorithm, createVerifier } from 'fast-jwt';
import { BEARER_TOKEN_PATTERN } from '#shared/auth/bearer.ts';
import { isHighS } from '#shared/auth/ecdsa-low-s.ts';
import { scopesOf } from '#shared/auth/scopes.ts';
import { CLOCK_TOLERANCE_SECONDS } from '#shared/auth/token-time.ts';
import { validateAddress } from '#shared/schemas/validators.generated.js';
import { TokenRejected } from './rejections.ts';
import type { AuthorizerSettings } from './settings.ts';

/** What a good token establishes. */
export interface Verified {
  readonly sub: string;
  readonly scopes: ReadonlySet<string>;
  /** NumericDate (seconds) after which, with the clock tolerance, the token is refused. */
  readonly exp: number;
}

/** Where the verifier finds the key a token names (`ExpiringJwksCache` in production). */
export interface JwksSource {
  getJwk(jwksUri: string, jwt: DecomposedJwt): Promise<JwkWithKid>;
}

/** Checks the `Authorization` header's access token; throws why it is not good. */
export type AccessTokenVerifier = (authorization: string | undefined) => Promise<Verified>;

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
/** JWE key management algorithms (RFC 7518 §4.1, RFC 8037): a key published for one encrypts. */
const ENCRYPTION_ALGORITHM = /^(RSA1_5|RSA-OAEP(-\d+)?|A\d+(GCM)?KW|dir|ECDH-ES(\+A\d+KW)?|PBES2-.+)$/;

/**
 * A key the provider publishes for encryption (Keycloak publishes one beside its signing keys):
 * no token it issues is signed with it, so a token naming it is the token's fault, not the
 * provider's. Anyone can name one, and the provider's faults raise an alarm.
 */
function isEncryptionKey(jwk: Jwk): boolean {
  // RFC 7517 §4.2 defines `sig` and `enc`: any other value is the provider's mistake, which pages.
  if (jwk.use === 'enc') return true;
  return typeof jwk.alg === 'string' && ENCRYPTION_ALGORITHM.test(jwk.alg);
}

const EC_ALGORITHMS: Record<string, Algorithm[]> = {
  'P-256': ['ES256'],
  'P-384': ['ES384'],
  'P-521': ['ES512'],
};

/** The claims of a verified token, as fast-jwt parsed them. */
type Claims = Record<string, unknown>;

const BEARER = new RegExp(BEARER_TOKEN_PATTERN);

/**
 * The access token check (RFC 9068, RFC 8725): the key by `kid` from `jwks`, the signature with an
 * algorithm that key allows, explicit typing, issuer, audience, the time claims and the lifetime,
 * `token_use`, and a `sub` that is a valid wallet address. Made once per container by the
 * authorizer's composition root; its memos live as long as it does.
 */
export function createAccessTokenVerifier(
  settings: AuthorizerSettings,
  jwks: JwksSource,
): AccessTokenVerifier {
  const { issuer, audience, jwksUri, scopePrefix, requireAtJwtTyp, requireLowS, maxLifetimeSeconds } =
    settings;

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
      if (isEncryptionKey(jwk)) {
        throw new TokenRejected(
          'unknown-kid',
          `The token names ${jwk.kid}, an encryption key, not a signing key`,
        );
      }
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
   * The token's header, unverified, only to find its key by `kid` (the verifier then decodes and
   * checks the whole token). Decoded on every call: a memo of decoded headers saved a negligible
   * share of a verification (docs/decisions/authorizer-jwt-libraries.md).
   */
  function headerOf(token: string): DecomposedJwt {
    let header: unknown;
    try {
      header = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString());
    } catch {
      // Not base64url JSON: rejected below.
    }
    if (typeof header !== 'object' || header === null) {
      throw new TokenRejected('malformed', 'The token header is not a base64url JSON object');
    }
    return { header, payload: {} } as DecomposedJwt;
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

  /**
   * The token is meant for this API: `aud` names it (RFC 9068 §4). Amazon Cognito access tokens
   * carry no `aud` (nor `typ`); they name the app client in `client_id`, which then must be the
   * configured audience, on a stage set for them (`auth:requireAtJwtTyp` false). A stage that
   * demands RFC 9068 tokens demands their `aud` too.
   */
  function isForUs(payload: { aud?: unknown; client_id?: unknown }): boolean {
    if (payload.aud === undefined) return !requireAtJwtTyp && payload.client_id === audience;
    return Array.isArray(payload.aud) ? payload.aud.includes(audience) : payload.aud === audience;
  }

  return async (authorization) => {
    const token = BEARER.exec(authorization?.trim() ?? '')?.[1];
    if (token === undefined) throw new TokenRejected('no-bearer-token', 'No Bearer token');
    checkCompactForm(token);
    const jwt = headerOf(token);
    if (requireLowS) checkLowS(jwt.header.alg, token);
    const jwk = await jwks.getJwk(jwksUri, jwt);
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
  };
}

/**
 * One spelling per token: a JWS in compact form is three segments of canonical base64url
 * (RFC 7515 §2, RFC 4648 §3.5): only the URL-safe alphabet, no padding, no length that leaves a
 * lone character, and the bits the last character leaves unused all zero. Node's decoder (and so
 * fast-jwt's) ignores those bits and skips stray characters, so without this check one token had
 * 16 spellings of its ES256 signature that all verified, each a rate-limit bucket and an
 * authorizer cache entry of its own (issue 45). Refused before any key is looked up.
 */
function checkCompactForm(token: string): void {
  const segments = token.split('.');
  if (segments.length !== 3 || !segments.every(isCanonicalBase64url)) {
    throw new TokenRejected('malformed', 'The token is not three segments of canonical base64url');
  }
}

const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE64URL_TEXT = /^[A-Za-z0-9_-]+$/;

/**
 * Whether `segment` is the one base64url text of its bytes: a last group of 2 characters carries
 * one byte and 4 unused bits, of 3 characters two bytes and 2 unused bits; a group of 1 carries none.
 */
export function isCanonicalBase64url(segment: string): boolean {
  if (!BASE64URL_TEXT.test(segment)) return false;
  const tail = segment.length % 4;
  if (tail === 0) return true;
  if (tail === 1) return false;
  const last = BASE64URL_ALPHABET.indexOf(segment.at(-1) as string);
  return (last & (tail === 2 ? 0b1111 : 0b11)) === 0;
}

/**
 * An ECDSA signature `(r, s)` has a twin `(r, n − s)` that verifies as well: the same token spelt
 * otherwise, so a rate-limit bucket and an authorizer cache entry of its own. Where the identity
 * provider signs with the low `s` (`auth:requireLowS`; the local issuer does), the high one is
 * refused before the signature is checked.
 */
function checkLowS(alg: unknown, token: string): void {
  if (isHighS(alg, Buffer.from(token.slice(token.lastIndexOf('.') + 1), 'base64url'))) {
    throw new TokenRejected('high-s', 'The ECDSA signature is not in its low-S form');
  }
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
