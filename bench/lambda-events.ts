/**
 * The events API Gateway (REST, proxy integration, a TOKEN authorizer) hands a function, as the
 * benchmark builds them: an authorizer's event for a token, and a route's event for a request
 * (`workload.ts` says which requests).
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { callerIdentity } from '#infra/local/proxy-event.ts';
import { methodArnFor } from '#shared/auth/policy.ts';
import { SCOPES } from '#shared/routes.ts';

/** Every scope the API knows: the benchmark's callers may call every route. */
export const ALL_SCOPES = Object.keys(SCOPES).join(' ');

const REGION = 'us-east-1';
const ACCOUNT_ID = '123456789012';
const API_ID = 'a1b2c3d4e5';
const STAGE = 'prod';
const HOST = `${API_ID}.execute-api.${REGION}.amazonaws.com`;

/** The method ARN API Gateway gives the authorizer for a request. */
export function methodArn(method: string, path: string): string {
  return methodArnFor({ region: REGION, accountId: ACCOUNT_ID, apiId: API_ID, stage: STAGE, method, path });
}

/** A TOKEN authorizer event for `token`. */
export function authorizerEvent(
  token: string,
  method = 'GET',
  path = '/api/wallet/balance',
): APIGatewayTokenAuthorizerEvent {
  return { type: 'TOKEN', authorizationToken: `Bearer ${token}`, methodArn: methodArn(method, path) };
}

export interface ProxyRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Without the query string. */
  readonly path: string;
  /** The query string, without `?` (`status=available`). */
  readonly query?: string;
  /** The route's resource path, e.g. `/api/v3/pet/{petId}`. */
  readonly resource: string;
  readonly pathParameters?: Record<string, string>;
  readonly body?: string;
  /** The body is base64 of bytes (a binary media type), as API Gateway hands an upload over. */
  readonly base64?: true;
  readonly headers?: Record<string, string>;
  /** The caller; `undefined` on public routes, where no authorizer runs. */
  readonly sub?: string;
  readonly token?: string;
}

/**
 * A REST API proxy (v1) event with the headers a regional endpoint adds (forwarding, tracing),
 * the authorizer's context (principal, scopes, latency) and a full request context.
 */
export function proxyEvent(request: ProxyRequest): APIGatewayProxyEvent {
  const requestId = randomUUID();
  const now = Date.now();
  const query = request.query === undefined ? undefined : new URLSearchParams(request.query);
  const multiValueQuery: Record<string, string[]> = {};
  for (const [name, value] of query ?? []) multiValueQuery[name] = [...(multiValueQuery[name] ?? []), value];
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'Accept-Encoding': 'gzip, deflate, br',
    ...(request.token === undefined ? {} : { Authorization: `Bearer ${request.token}` }),
    ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    Host: HOST,
    'User-Agent': 'wallet-catalog-bench/1.0',
    'X-Amzn-Trace-Id': `Root=1-${Math.floor(now / 1000).toString(16)}-${requestId.replaceAll('-', '').slice(0, 24)}`,
    'X-Forwarded-For': '203.0.113.7',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
    ...request.headers,
  };
  return {
    resource: request.resource,
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    // As API Gateway: the last value of a repeated parameter, and all of them in the multi-value map.
    queryStringParameters: query ? Object.fromEntries(query) : null,
    multiValueQueryStringParameters: query ? multiValueQuery : null,
    pathParameters: request.pathParameters ?? null,
    stageVariables: null,
    body: request.body ?? null,
    isBase64Encoded: request.base64 === true,
    requestContext: {
      accountId: ACCOUNT_ID,
      apiId: API_ID,
      authorizer:
        request.sub === undefined
          ? null
          : {
              principalId: request.sub,
              sub: request.sub,
              scope: ALL_SCOPES,
              // The token's exp, which the functions check on every request (an hour ahead).
              exp: String(Math.floor(now / 1000) + 3600),
              integrationLatency: 0,
            },
      domainName: HOST,
      domainPrefix: API_ID,
      extendedRequestId: requestId.slice(0, 16),
      httpMethod: request.method,
      identity: callerIdentity('203.0.113.7', 'wallet-catalog-bench/1.0'),
      path: `/${STAGE}${request.path}`,
      protocol: 'HTTP/1.1',
      requestId,
      requestTime: new Date(now).toUTCString(),
      requestTimeEpoch: now,
      resourceId: 'abc123',
      resourcePath: request.resource,
      stage: STAGE,
    },
  };
}
