/**
 * The one clock rule for token times, shared by the authorizer (which checks `exp`, `nbf` and
 * `iat` on every token it verifies) and the function-side middleware (which checks `exp` again on
 * every request, since API Gateway reuses the authorizer's answer for its cache TTL whatever the
 * token's `exp`). RFC 8725 §3.10 asks for little leeway; the issue caps it at 5 s.
 */
export const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * Whether a token whose `exp` (NumericDate, seconds) is `exp` has expired at `nowMs`: as fast-jwt
 * decides it in the authorizer, still valid up to and including `exp` + the tolerance.
 */
export function hasExpired(exp: number, nowMs: number): boolean {
  return !(nowMs <= exp * 1000 + CLOCK_TOLERANCE_SECONDS * 1000);
}
