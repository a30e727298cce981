/**
 * Invoking a route's function in this process, as Lambda would: the handler modules of
 * `functions/`, a Lambda context with a deadline, API Gateway's integration timeout, and the
 * proxy result checked as API Gateway reads it. Behind {@link Invoker}, so another dispatcher
 * (e.g. a bundle runner) can take its place.
 */
import { randomUUID } from 'node:crypto';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Route } from '#shared/routes.ts';
import { LOCAL_DEPLOYMENT } from './deployment.ts';
import { type Answer, GatewayError, logFunctionError } from './gateway-answer.ts';
import { MAX_REQUEST_BYTES } from './invoke/protocol.ts';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** Runs a route's function for one event; resolves to what the function returned, unchecked. */
export interface Invoker {
  invoke(route: Route, event: APIGatewayProxyEvent, context: Context): Promise<unknown>;
}

/** Imports `functions/<name>/handler.ts` and returns its `handler`; throws when it has none. */
export async function loadHandler(name: string): Promise<unknown> {
  const module = (await import(new URL(`../../functions/${name}/handler.ts`, import.meta.url).href)) as {
    handler?: unknown;
  };
  if (typeof module.handler !== 'function') throw new Error('exports no `handler` function');
  return module.handler;
}

/**
 * Runs `load` (an import) with `process.env` holding, of `all` (every function's variables, as the
 * local stack sets them), only `own`: a module reading its configuration at load sees what its
 * template gives it, and fails here on a variable only another function has. Restores `all` after.
 * Variables `all` does not name (the developer's shell, the test runner's) are left alone.
 */
export async function withOwnEnvironment<T>(
  own: Readonly<Record<string, string>>,
  all: Readonly<Record<string, string>>,
  load: () => Promise<T>,
): Promise<T> {
  for (const name of Object.keys(all)) if (!(name in own)) delete process.env[name];
  Object.assign(process.env, own);
  try {
    return await load();
  } finally {
    Object.assign(process.env, all);
  }
}

/**
 * The in-process invoker: every route's handler module, imported once, one after another, each
 * seeing only its own variables at load ({@link withOwnEnvironment}). At request time they share
 * this process and its `process.env`, and modules they share were initialised once, for the first
 * importer: the bundled mode (`invoke/bundled-functions.ts`) is the check for what that hides.
 */
export class InProcessInvoker implements Invoker {
  private readonly handlers = new Map<string, ProxyHandler>();
  readonly loadErrors: Record<string, string> = {};

  /**
   * Imports each route's module with `environmentOf(route)` as its environment within `all`; a
   * module that fails to load is reported, not fatal.
   */
  async load(
    routes: readonly Route[],
    environmentOf: (route: Route) => Readonly<Record<string, string>>,
    all: Readonly<Record<string, string>>,
  ): Promise<void> {
    for (const route of routes) {
      const name = route.functionDir;
      if (this.handlers.has(name) || name in this.loadErrors) continue;
      try {
        const handler = await withOwnEnvironment(environmentOf(route), all, () => loadHandler(name));
        this.handlers.set(name, handler as ProxyHandler);
      } catch (error) {
        this.loadErrors[name] = error instanceof Error ? error.message : String(error);
      }
    }
  }

  invoke(route: Route, event: APIGatewayProxyEvent, context: Context): Promise<unknown> {
    const handler = this.handlers.get(route.functionDir);
    if (!handler) {
      return Promise.reject(new GatewayError('DEFAULT_5XX', `${route.functionDir} failed to load`, 502));
    }
    return Promise.resolve(handler(event, context));
  }
}

/**
 * Invokes the route's function within the integration timeout and turns its result into the
 * answer; a function that throws or times out is API Gateway's 502 or 504.
 */
export async function invokeRoute(
  invoker: Invoker,
  route: Route,
  event: APIGatewayProxyEvent,
  integrationTimeoutMs: number,
  /**
   * Whether a base64 answer goes out as bytes: API Gateway decodes it only for a client whose
   * first Accept type is one of the API's binary media types, and sends the base64 text otherwise.
   */
  answersBytes = true,
): Promise<Answer> {
  // Lambda refuses an event over its invocation payload limit before any function runs, and API
  // Gateway answers that 413: a body within API Gateway's own limit (MAX_BODY_BYTES, request-body.ts)
  // can still make an event over MAX_REQUEST_BYTES.
  if (exceedsLambdaRequestLimit(event)) {
    throw new GatewayError(
      'REQUEST_TOO_LARGE',
      'Request Too Long',
      undefined,
      undefined,
      `The request exceeds Lambda's invocation payload limit of 6 MB (${MAX_REQUEST_BYTES} bytes) once made into the event the function receives (the body, base64 for a binary media type, with the headers); the body is within API Gateway's 10 MB`,
    );
  }
  const context = lambdaContext(`local-${route.operationId}`, integrationTimeoutMs);
  let result: unknown;
  try {
    result = await withTimeout(invoker.invoke(route, event, context), integrationTimeoutMs);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    logFunctionError(route.functionDir, event.requestContext.requestId, error);
    throw new GatewayError('DEFAULT_5XX', 'Internal server error', 502);
  }
  return proxyAnswer(result, route.functionDir, event.requestContext.requestId, answersBytes);
}

/**
 * Whether the event, as the JSON Lambda is invoked with, is over the synchronous invocation limit.
 * Only a large body can take it there (headers are bounded far below), so only then is it measured.
 */
function exceedsLambdaRequestLimit(event: APIGatewayProxyEvent): boolean {
  if ((event.body?.length ?? 0) < MAX_REQUEST_BYTES / 8) return false;
  return Buffer.byteLength(JSON.stringify(event)) > MAX_REQUEST_BYTES;
}

/**
 * A Lambda context as the runtime passes it, its deadline `timeoutMs` from now: routes pass their
 * integration timeout; the authorizer takes the default.
 */
export function lambdaContext(functionName: string, timeoutMs = 10_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_DEPLOYMENT.region}:${LOCAL_DEPLOYMENT.accountId}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A function's result on the wire; a result API Gateway could not read is its 502. */
function proxyAnswer(result: unknown, functionDir: string, requestId: string, answersBytes: boolean): Answer {
  const malformed = (reason: string) => {
    logFunctionError(functionDir, requestId, new Error(`Malformed Lambda proxy response: ${reason}`));
    return new GatewayError('DEFAULT_5XX', 'Malformed Lambda proxy response', 502);
  };
  if (typeof result !== 'object' || result === null) throw malformed('not an object');
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } =
    result as Partial<APIGatewayProxyResult>;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    throw malformed('statusCode');
  }
  if (body !== undefined && body !== null && typeof body !== 'string')
    throw malformed('body is not a string');
  const merged: Record<string, string | string[]> = {};
  try {
    for (const [name, value] of Object.entries(headers ?? {})) {
      validateHeaderName(name);
      validateHeaderValue(name, String(value));
      merged[name.toLowerCase()] = String(value);
    }
    // API Gateway merges both maps; a name in multiValueHeaders keeps only those values.
    for (const [name, values] of Object.entries(multiValueHeaders ?? {})) {
      validateHeaderName(name);
      const strings = values.map(String);
      for (const value of strings) validateHeaderValue(name, value);
      merged[name.toLowerCase()] = strings;
    }
  } catch (error) {
    throw malformed((error as Error).message);
  }
  return {
    statusCode,
    headers: merged,
    body: isBase64Encoded && answersBytes ? Buffer.from(body ?? '', 'base64') : (body ?? ''),
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GatewayError('DEFAULT_5XX', 'Endpoint request timed out', 504)), ms);
  });
  return Promise.race([promise, timedOut]).finally(() => clearTimeout(timer));
}
