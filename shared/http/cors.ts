import type { MiddlewareObj } from '@middy/core';
import httpCors from '@middy/http-cors';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { optionalEnv } from '../config.ts';

/**
 * CORS, off unless a stage lists the origins a browser app may call the API from (CDK context
 * `api:corsAllowedOrigins`). The gateway answers preflight requests (API Gateway mock methods,
 * the local gateway alike); each function adds `Access-Control-Allow-Origin` to its own answers,
 * for an allowed `Origin` only, from `CORS_ALLOWED_ORIGINS` (space-separated).
 */
export const CORS_ORIGINS_ENV = 'CORS_ALLOWED_ORIGINS';

/**
 * Request headers a browser may send cross-origin beyond the safelisted ones: `If-Match` for the
 * pet's changes, and the Petstore's `api_key`, which a Petstore client sends on DELETE (and
 * nothing reads), so that its preflight does not fail.
 */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'api_key',
] as const;
/** Response headers a browser app may read beyond the safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Idempotent-Replayed',
  'Link',
  'Retry-After',
  'WWW-Authenticate',
  'X-Amzn-RequestId',
] as const;
/** How long a browser may reuse a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

/** An origin as browsers send it: scheme, host and port only, https (http for localhost). */
export function isOrigin(text: string): boolean {
  const url = URL.parse(text);
  if (url === null || url.origin !== text) return false;
  return (
    url.protocol === 'https:' ||
    (url.protocol === 'http:' && ['localhost', '127.0.0.1'].includes(url.hostname))
  );
}

/** The allowed origins of this function, read once at cold start; empty when CORS is off. */
export function corsOriginsFromEnv(): string[] {
  const origins = (optionalEnv(CORS_ORIGINS_ENV) ?? '').split(' ').filter((o) => o !== '');
  const bad = origins.find((origin) => !isOrigin(origin));
  if (bad !== undefined) throw new Error(`${CORS_ORIGINS_ENV}: "${bad}" is not an origin`);
  return origins;
}

/**
 * middy's CORS middleware for the allowed origins: the caller's origin echoed when listed
 * (nothing otherwise), `Vary: Origin` always, since the answer depends on it.
 */
export function corsMiddleware(
  origins: readonly string[],
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  // `vary` is an option of the middleware its type declarations leave out.
  const options = { origins: [...origins], vary: 'Origin', exposeHeaders: CORS_EXPOSED_HEADERS.join(', ') };
  return httpCors(options) as MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;
}
