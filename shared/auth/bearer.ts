/**
 * `Bearer <b64token>` (RFC 6750 §2.1), the scheme in any case (RFC 9110 §11.1), the token captured:
 * the one pattern API Gateway validates the Authorization header with (anything else is answered
 * 401 without invoking, and paying for, the authorizer) and the authorizer takes the token from.
 * A string, as API Gateway takes it.
 */
export const BEARER_TOKEN_PATTERN = '^[Bb][Ee][Aa][Rr][Ee][Rr] +([-A-Za-z0-9._~+/]+=*)$';
