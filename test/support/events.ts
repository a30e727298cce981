import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { proxyEvent } from '#infra/local/proxy-event.ts';

export interface EventOptions {
  method?: string;
  path?: string;
  resource?: string;
  body?: unknown;
  /** Sent as is when a string; JSON-encoded otherwise. */
  rawBody?: string | null;
  /** A map, or header lines as `IncomingMessage.rawHeaders` lists them (`name, value, …`), repeats kept. */
  headers?: Record<string, string> | readonly string[];
  pathParameters?: Record<string, string>;
  /** The query string, without `?` (`tags=a&tags=b`). */
  query?: string;
  /** The authorizer's principal; `null` for an event that carries none. */
  sub?: string | null;
  scopes?: readonly string[];
  /** The token's `exp` the authorizer passed on (seconds); an hour from now unless given, `null` for none. */
  exp?: number | null;
}

/** The options of an event sent with `key` as its Idempotency-Key (each line of a list), or without one. */
export const idempotencyKeyHeaders = (key?: string | readonly string[]): Pick<EventOptions, 'headers'> =>
  key === undefined
    ? {}
    : {
        headers:
          typeof key === 'string' ? { 'Idempotency-Key': key } : key.flatMap((k) => ['Idempotency-Key', k]),
      };

/** A unique caller id, so tests never share data. */
export const uniqueSub = (label = 'user'): string => `${label}-${randomUUID()}`;

/** An API Gateway REST proxy (v1) event as the gateway sends it after the authorizer allowed the call. */
export function apiEvent(options: EventOptions = {}): APIGatewayProxyEvent {
  const method = options.method ?? 'GET';
  const path = options.path ?? '/';
  const sub = options.sub === undefined ? uniqueSub() : options.sub;
  const body =
    options.rawBody !== undefined
      ? options.rawBody
      : options.body === undefined
        ? null
        : JSON.stringify(options.body);
  const given = options.headers ?? {};
  const lines: readonly string[] = Array.isArray(given) ? given : Object.entries(given).flat();
  // A body is JSON unless the test names its Content-Type: then that line alone, as a client sends.
  const named = lines.some((line, i) => i % 2 === 0 && line.toLowerCase() === 'content-type');
  const headers = body !== null && !named ? ['Content-Type', 'application/json', ...lines] : lines;
  return proxyEvent({
    method,
    path,
    resource: options.resource ?? path,
    headers,
    pathParameters: options.pathParameters ?? null,
    ...(options.query === undefined ? {} : { query: new URLSearchParams(options.query) }),
    body,
    authorizer: sub === null ? null : authorizerContext(sub, options),
    requestId: randomUUID(),
    deployment: { accountId: '123456789012', apiId: 'local', stage: 'test' },
  });
}

/** The context API Gateway hands on from the authorizer: every value a string. */
function authorizerContext(sub: string, options: EventOptions): Record<string, string> {
  const exp = options.exp === undefined ? Math.floor(Date.now() / 1000) + 3600 : options.exp;
  return {
    principalId: sub,
    scope: (options.scopes ?? []).join(' '),
    ...(exp === null ? {} : { exp: String(exp) }),
  };
}

/** A Lambda context good enough for in-process invocations, `remainingMs` from its timeout. */
export function lambdaContext(functionName = 'test', remainingMs = 30_000): Context {
  const timesOutAt = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, timesOutAt - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** Invokes a handler and parses its JSON body. */
export async function invoke(handler: Handler, event: APIGatewayProxyEvent, context = lambdaContext()) {
  const response = await handler(event, context);
  const contentType = response.headers?.['content-type'];
  return { ...response, contentType, json: response.body ? JSON.parse(response.body) : undefined };
}

/**
 * The event of `POST /api/wallet/send` from `sub` (with `write:wallet`): `body` sent as is when a
 * string (to control the amount's exact JSON text), JSON-encoded otherwise.
 */
export const sendEvent = (
  sub: string,
  body: unknown,
  headers: Record<string, string> | readonly string[] = {},
) =>
  apiEvent({
    sub,
    scopes: ['write:wallet'],
    method: 'POST',
    path: '/api/wallet/send',
    ...(typeof body === 'string' ? { rawBody: body } : { body }),
    headers,
  });
