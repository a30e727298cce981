import { INVALID_TOKEN_CHALLENGE, insufficientScopeChallenge } from './bearer-challenge.ts';
import { problemType } from './problem.ts';

/**
 * The answers API Gateway gives itself, before or instead of a function: set as gateway
 * responses in CDK and rendered the same way by the local gateway, so both speak problem+json.
 */
export interface GatewayResponse {
  /** API Gateway `ResponseType`. */
  readonly type:
    | 'UNAUTHORIZED'
    | 'ACCESS_DENIED'
    | 'AUTHORIZER_FAILURE'
    | 'AUTHORIZER_CONFIGURATION_ERROR'
    | 'MISSING_AUTHENTICATION_TOKEN'
    | 'REQUEST_TOO_LARGE'
    | 'THROTTLED'
    | 'DEFAULT_4XX'
    | 'DEFAULT_5XX';
  /** Status to answer with; `undefined` keeps the one API Gateway chose (the DEFAULT_* families). */
  readonly status?: number;
  readonly slug: string;
  readonly title: string;
  /** Fixed text, or `null` for API Gateway's own message about the failure. */
  readonly detail: string | null;
  /** Extra headers, values as sent (CDK quotes them for API Gateway). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The `Retry-After` of a token that could not be checked: the authorizer's back-off after a failed
 * JWKS fetch (`JWKS_FETCH_BACKOFF_MS`), so that a retry does not land inside it and fail at once.
 */
export const AUTHORIZER_RETRY_AFTER_SECONDS = 5;

/**
 * The authorizer could not check the token: its identity provider is down (or the authorizer
 * failed), which a retry may get past. Not the 401 of a bad token, whose `invalid_token` tells an
 * RFC 6750 client to drop the token and sign in again, at a provider that is down. API Gateway
 * answers an authorizer's error other than `Unauthorized` as AUTHORIZER_CONFIGURATION_ERROR
 * (`x-amzn-ErrorType: AuthorizerConfigurationException`); AWS documents AUTHORIZER_FAILURE for an
 * authorizer that "failed to authenticate the caller", so both answer alike.
 * docs/decisions/authorizer-jwt-libraries.md
 */
const authorizerUnavailable = {
  status: 503,
  slug: 'temporarily-unavailable',
  title: 'Service temporarily unavailable',
  detail:
    'The access token could not be checked for now (the identity provider or the authorizer is unavailable); it was not found invalid. Retry with it after the seconds in Retry-After',
  headers: { 'Retry-After': String(AUTHORIZER_RETRY_AFTER_SECONDS) },
} as const;

export const gatewayResponses: readonly GatewayResponse[] = [
  {
    type: 'UNAUTHORIZED',
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    detail: 'A valid bearer token is required: send Authorization: Bearer <access token>',
    headers: { 'WWW-Authenticate': INVALID_TOKEN_CHALLENGE },
  },
  {
    type: 'ACCESS_DENIED',
    status: 403,
    slug: 'insufficient-scope',
    title: 'Insufficient scope',
    detail: 'The access token does not grant the scope this operation requires',
    headers: { 'WWW-Authenticate': insufficientScopeChallenge() },
  },
  { type: 'AUTHORIZER_FAILURE', ...authorizerUnavailable },
  { type: 'AUTHORIZER_CONFIGURATION_ERROR', ...authorizerUnavailable },
  {
    // What API Gateway answers for a path no route serves (a 403 by default, though no token is
    // missing). A wrong method on a routed path gets a 405 instead (infra/constructs/http-edges.ts).
    type: 'MISSING_AUTHENTICATION_TOKEN',
    status: 404,
    slug: 'no-such-route',
    title: 'Not found',
    detail: 'No operation is served at this method and path; see /api/openapi.json',
  },
  {
    type: 'REQUEST_TOO_LARGE',
    status: 413,
    slug: 'payload-too-large',
    title: 'Payload too large',
    // API Gateway answers both limits with this one response and one message, so the deployed
    // text names both; the local gateway, which knows which one was hit, names that one.
    detail:
      "The request is too large: API Gateway takes a body of at most 10 MB, and the event passed to the function (the body, base64 for a binary media type, with the headers) must stay within Lambda's 6 MB invocation payload limit",
  },
  {
    type: 'THROTTLED',
    status: 429,
    slug: 'throttled',
    title: 'Too many requests',
    detail: 'The request rate exceeds the limit; retry later with backoff',
  },
  { type: 'DEFAULT_4XX', slug: 'bad-request', title: 'Bad request', detail: null },
  {
    type: 'DEFAULT_5XX',
    slug: 'gateway-error',
    title: 'Gateway error',
    detail: 'The gateway could not complete the request. Quote the requestId when you report it.',
  },
];

/**
 * The body mapping template of a gateway response: JSON with API Gateway `$context` variables,
 * which API Gateway fills in (and the local gateway, in `infra/local/gateway-answer.ts`).
 */
export function gatewayResponseTemplate(response: GatewayResponse): string {
  const status = response.status === undefined ? '' : `,"status":${response.status}`;
  // `messageString` is API Gateway's message already quoted and escaped as a JSON string.
  const detail = response.detail === null ? '$context.error.messageString' : JSON.stringify(response.detail);
  return `{"type":${JSON.stringify(problemType(response.slug))},"title":${JSON.stringify(response.title)}${status},"detail":${detail},"requestId":"$context.requestId"}`;
}
