import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { NotFoundError } from '../errors.ts';

/**
 * One form for every path: without a trailing slash. API Gateway matches `/api/openapi.json/`
 * to the `/api/openapi.json` resource and calls its function, so the function refuses it (404,
 * before any other check); the local gateway routes it the same way, so it is refused the same.
 * The authorizer allows paths ending in "/" to every valid token (`shared/auth/policy.ts`), so this
 * 404 comes before the scopes are judged, on every route.
 */
export const canonicalPath = (): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  before: ({ event }) => {
    const path = event.path;
    if (typeof path === 'string' && path.length > 1 && path.endsWith('/')) {
      throw new NotFoundError('No operation is served at a path ending in "/": send it without the slash');
    }
  },
});
