/**
 * The `WWW-Authenticate` challenges (RFC 6750 §3) of a 401 and a 403, in one place: the functions,
 * the gateway's own answers and the OpenAPI document's examples send the same text.
 */

/** A 401: no token, or one that is not valid. */
export const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

/**
 * A 403: the token lacks a scope. The functions name the scopes the route needs; the gateway's own
 * answer cannot (one static header for every route), so it names none.
 */
export const insufficientScopeChallenge = (scopes?: readonly string[]): string =>
  scopes === undefined
    ? 'Bearer error="insufficient_scope"'
    : `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"`;
