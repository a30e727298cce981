import type { Route } from '../routes.ts';
import { problemType } from './problem.ts';

/**
 * The answer to a method a known path is not served with: 405 and the methods it is served with
 * in `Allow` (RFC 9110 §15.5.6). API Gateway answers it from a mock integration on each resource
 * (`infra/constructs/http-edges.ts`), the local gateway from the same route table.
 */
export const METHOD_NOT_ALLOWED = {
  status: 405,
  slug: 'method-not-allowed',
  title: 'Method not allowed',
} as const;

/** The `Allow` value of a resource path: its routes' methods, and OPTIONS where CORS preflight is answered. */
export function allowHeader(routes: readonly Route[], path: string, preflight: boolean): string {
  const methods = routes.filter((route) => route.path === path).map((route) => route.method as string);
  if (preflight) methods.push('OPTIONS');
  return [...new Set(methods)].join(', ');
}

/** The problem+json body, with API Gateway's `$context.requestId` where the request id goes. */
export function methodNotAllowedTemplate(allow: string): string {
  return JSON.stringify({
    type: problemType(METHOD_NOT_ALLOWED.slug),
    title: METHOD_NOT_ALLOWED.title,
    status: METHOD_NOT_ALLOWED.status,
    detail: `This path is served with ${allow} only`,
    requestId: '$context.requestId',
  });
}
