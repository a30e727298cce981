/**
 * The API Gateway REST proxy (v1) event a function receives: built here once, for the local
 * gateway and for tests that invoke handlers directly.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { LOCAL_DEPLOYMENT } from './deployment.ts';

export interface ProxyEventInput {
  readonly method: string;
  /** The request path, as the client sent it (normalised). */
  readonly path: string;
  /** The route's resource path, e.g. `/api/v3/pet/{petId}`; `path` when absent. */
  readonly resource?: string;
  /** Raw header list (`name, value, name, value…`, as `IncomingMessage.rawHeaders`) or a map. */
  readonly headers?: readonly string[] | Readonly<Record<string, string>>;
  readonly query?: URLSearchParams | null;
  readonly pathParameters?: Record<string, string> | null;
  /** The body as the function sees it: text, or base64 when `isBase64Encoded`. */
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
  /** The authorizer's context; `null` for a route without authorizer. */
  readonly authorizer?: Record<string, string | number> | null;
  readonly requestId: string;
  readonly resourceId?: string;
  readonly sourceIp?: string;
  readonly userAgent?: string | null;
  readonly protocol?: string;
  readonly domainName?: string;
  readonly deployment?: { readonly accountId: string; readonly apiId: string; readonly stage: string };
  readonly now?: Date;
}

export function proxyEvent(input: ProxyEventInput): APIGatewayProxyEvent {
  const { method, path, requestId } = input;
  const resource = input.resource ?? path;
  const deployment = input.deployment ?? LOCAL_DEPLOYMENT;
  const { headers, multiValueHeaders } = eventHeaders(input.headers ?? []);
  const { query, multiValueQuery } = eventQuery(input.query ?? null);
  const now = input.now ?? new Date();
  const domainName = input.domainName ?? '127.0.0.1';
  return {
    resource,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: query,
    multiValueQueryStringParameters: multiValueQuery,
    pathParameters: input.pathParameters ? Object.assign(Object.create(null), input.pathParameters) : null,
    stageVariables: null,
    body: input.body ?? null,
    isBase64Encoded: input.isBase64Encoded ?? false,
    requestContext: {
      accountId: deployment.accountId,
      apiId: deployment.apiId,
      authorizer: input.authorizer ?? null,
      domainName,
      // API Gateway's first label of the host: the API id on an execute-api name.
      domainPrefix: domainName.split('.')[0] ?? domainName,
      extendedRequestId: requestId,
      httpMethod: method,
      identity: callerIdentity(input.sourceIp ?? '127.0.0.1', input.userAgent ?? null),
      path,
      protocol: input.protocol ?? 'HTTP/1.1',
      requestId,
      requestTime: requestTime(now),
      requestTimeEpoch: now.getTime(),
      resourceId: input.resourceId ?? deployment.apiId,
      resourcePath: resource,
      stage: deployment.stage,
    },
  };
}

/**
 * The `requestContext.identity` of a REST proxy event for a caller authorised by a Lambda
 * authorizer: no IAM, Cognito identity pool or API key fields, only address and user agent.
 */
export function callerIdentity(
  sourceIp: string,
  userAgent: string | null,
): APIGatewayProxyEvent['requestContext']['identity'] {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}

/**
 * Headers as sent, names in the client's spelling: the last value in `headers`, all in
 * `multiValueHeaders`. The maps have no prototype, so a header named after an `Object.prototype`
 * member (`constructor`, `__proto__`) is a header like any other, never an inherited member.
 */
function eventHeaders(given: readonly string[] | Readonly<Record<string, string>>): {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
} {
  const rawHeaders = Array.isArray(given) ? (given as readonly string[]) : Object.entries(given).flat();
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  return { headers, multiValueHeaders };
}

/** The query's parameters, in maps without a prototype for the same reason as the headers'. */
function eventQuery(params: URLSearchParams | null): {
  query: Record<string, string> | null;
  multiValueQuery: Record<string, string[]> | null;
} {
  if (params === null || params.size === 0) return { query: null, multiValueQuery: null };
  const query: Record<string, string> = Object.create(null);
  const multiValueQuery: Record<string, string[]> = Object.create(null);
  for (const [name, value] of params) {
    query[name] = value;
    multiValueQuery[name] = [...(multiValueQuery[name] ?? []), value];
  }
  return { query, multiValueQuery };
}

let lastRequestTime = { second: Number.NaN, text: '' };

/** `$context.requestTime`: `dd/MMM/yyyy:HH:mm:ss +0000`; it changes once a second, so it is made once a second. */
function requestTime(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastRequestTime.second) {
    const [, day, month, year, time] = /^\w+, (\d+) (\w+) (\d+) ([\d:]+)/.exec(date.toUTCString()) ?? [];
    lastRequestTime = { second, text: `${day}/${month}/${year}:${time} +0000` };
  }
  return lastRequestTime.text;
}
