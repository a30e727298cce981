/**
 * The key of the per-caller rate limit: the Authorization header after AWS WAF's text
 * transformations, the one list the deployed rule (`constructs/caller-rate-limit.ts`) is built
 * from and the local gateway's limiter (`local/caller-rate-limit.ts`) applies, so both count the
 * same spellings as one caller.
 *
 * The scheme is case-insensitive (RFC 9110 §11.1) and RFC 6750 allows one or more spaces before
 * the token, so `Bearer T`, `bearer T` and `BEARER  T` are one credential; the authorizer accepts
 * them all. Without the transformations each spelling was a bucket of its own. Lowercasing the
 * whole value lowercases the token too: two tokens differing only in case share a bucket, which
 * only ever counts a caller more strictly (and base64url JWTs that differ only in case are not
 * both valid signatures of one issuer in practice).
 */

/** AWS WAF `TextTransformation` types, applied in this order (their WAF priorities). */
export const CALLER_RATE_KEY_TRANSFORMATIONS = ['COMPRESS_WHITE_SPACE', 'LOWERCASE'] as const;

type Transformation = (typeof CALLER_RATE_KEY_TRANSFORMATIONS)[number];

/** Each transformation as AWS WAF documents it. */
const TRANSFORM: Readonly<Record<Transformation, (text: string) => string>> = {
  // \f \t \n \r \v and NO-BREAK SPACE become a space; a run of spaces becomes one.
  COMPRESS_WHITE_SPACE: (text) => text.replace(/[\t\n\v\f\r\u00A0 ]+/g, ' '),
  // A–Z only: WAF does not lowercase other letters.
  LOWERCASE: (text) => text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase()),
};

/** The bucket a request's Authorization header counts against, as the deployed rule keys it. */
export function callerRateKey(authorization: string): string {
  let key = authorization;
  for (const transformation of CALLER_RATE_KEY_TRANSFORMATIONS) key = TRANSFORM[transformation](key);
  return key;
}
