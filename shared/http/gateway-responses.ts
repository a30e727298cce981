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

export const gatewayResponses: readonly GatewayResponse[] = [
  {
    type: 'UNAUTHORIZED',
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    detail: 'A valid bearer token is required: send Authorization: Bearer <access token>',
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  },
  {
    type: 'ACCESS_DENIED',
    status: 403,
    slug: 'insufficient-scope',
    title: 'Insufficient scope',
    detail: 'The access token does not grant the scope this operation requires',
    headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope"' },
  },
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
