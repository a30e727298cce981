import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { ValidateFunction } from 'ajv';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import {
  InsufficientScopeError,
  MalformedBodyError,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.ts';
import { addLogField, withRequestTelemetry } from '../observability/telemetry.ts';
import { type OperationId, routeOf } from '../routes.ts';
import { jsonResponse } from './problem.ts';
import { problemErrorHandler } from './problem-middleware.ts';
import { toViolations } from './validation.ts';

/** The authenticated caller, as the authorizer established it. */
export interface Principal {
  readonly sub: string;
  readonly scopes: ReadonlySet<string>;
}

/** What a use case sees of an HTTP request: nothing of API Gateway beyond this. */
export interface HttpRequest<TBody> {
  readonly principal: Principal;
  readonly body: TBody;
  /** The body exactly as sent, for checks that need the JSON text (exact decimals). */
  readonly rawBody: string | null;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  readonly requestId: string;
}

/** A successful outcome; errors are thrown as typed errors instead. */
export interface HttpResult {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

type Event = APIGatewayProxyEvent;
type Middleware = MiddlewareObj<Event, APIGatewayProxyResult, Error, Context>;

/** The body text as received, kept beside the parsed body for checks on the JSON text itself. */
const rawBodies = new WeakMap<Event, string | null>();

/**
 * Lower-case header names, memoised: requests repeat the same few dozen names, and a freshly
 * lower-cased string costs a string-table lookup every time it becomes a property key. Capped, as
 * clients choose the names.
 */
const lowerCaseNames = new Map<string, string>();
const LOWER_CASE_NAMES_CAP = 256;

function lowerCaseName(name: string): string {
  let lower = lowerCaseNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerCaseNames.size < LOWER_CASE_NAMES_CAP) lowerCaseNames.set(name, lower);
  }
  return lower;
}

/** Header names arrive as the client wrote them; lower-case them once for every later step. */
const normalizeHeaders = (): Middleware => ({
  before: ({ event }) => {
    const given = event.headers ?? {};
    const headers: Record<string, string> = {};
    for (const name in given) {
      const value = given[name];
      if (value !== undefined) headers[lowerCaseName(name)] = value;
    }
    event.headers = headers;
  },
});

/** The caller as {@link requireScopes} established it, so that the handler need not parse it again. */
const principals = new WeakMap<Event, Principal>();

/** The caller's identity and scopes, taken only from the authorizer's context. */
export function principalOf(event: Event): Principal {
  const authorizer = event.requestContext.authorizer;
  const sub = authorizer?.principalId;
  if (typeof sub !== 'string' || sub === '') {
    throw new UnauthenticatedError('No authenticated caller');
  }
  const scope = authorizer?.scope;
  return { sub, scopes: new Set(typeof scope === 'string' && scope !== '' ? scope.split(' ') : []) };
}

/** Re-checks the route's scopes in the function itself: defence in depth behind the authorizer. */
const requireScopes = (scopes: readonly string[]): Middleware => ({
  before: ({ event }) => {
    const principal = principalOf(event);
    if (!scopes.every((scope) => principal.scopes.has(scope))) throw new InsufficientScopeError(scopes);
    principals.set(event, principal);
  },
});

/** The caller of a public route: nobody in particular. */
const ANONYMOUS: Principal = { sub: '', scopes: new Set() };

/**
 * Parses the JSON body with middy's parser, translating its errors into ours, and validates it
 * with a generated standalone validator.
 */
const jsonBody = (validate: ValidateFunction): Middleware => {
  const parser = httpJsonBodyParser();
  return {
    // Synchronous, as the parser is: awaiting it would cost every request with a body two microtask turns.
    before: (request) => {
      rawBodies.set(request.event, request.event.body);
      try {
        parser.before?.(request as never);
      } catch (error) {
        throw translateParserError(error);
      }
      const body: unknown = request.event.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new MalformedBodyError('The request body must be a JSON object');
      }
      if (!validate(body)) throw new ValidationError(toViolations(validate.errors));
    },
  };
};

function translateParserError(error: unknown): Error {
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 415) {
    return new UnsupportedMediaTypeError('Send the body as JSON with Content-Type: application/json');
  }
  const cause = (error as { cause?: { data?: unknown } }).cause;
  if (status === 422 && (error as Error).message === 'Forbidden key in JSON body') {
    return new ValidationError([{ pointer: `/${String(cause?.data)}`, detail: 'is not allowed' }]);
  }
  if (status === 422) return new MalformedBodyError('The request body is not valid JSON');
  return error instanceof Error ? error : new Error(String(error));
}

export interface HttpHandlerOptions<TBody> {
  /** The operation served: its scopes come from the route table. */
  readonly operationId: OperationId;
  /** The generated validator of the JSON body, for operations that take one. */
  readonly body?: ValidateFunction;
  /** The use case: gets a validated request, returns a result or throws a typed error. */
  readonly run: (request: HttpRequest<TBody>) => Promise<HttpResult>;
}

/**
 * Wraps a use case into an API Gateway (REST, proxy) Lambda handler: headers normalised, scopes
 * re-checked, body parsed and validated, and every error turned into problem+json by the one
 * error handler, registered first so that its `onError` runs last.
 */
export function httpHandler<TBody = undefined>(options: HttpHandlerOptions<TBody>) {
  const { scopes } = routeOf(options.operationId);
  const middlewares: Middleware[] = [problemErrorHandler(), normalizeHeaders()];
  if (scopes) middlewares.push(requireScopes(scopes));
  if (options.body) middlewares.push(jsonBody(options.body));

  // No early-timeout timer: it costs a timer and a promise race on every request, and a function
  // about to time out is answered by the gateway's DEFAULT_5XX problem all the same.
  const handler = middy<Event, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 })
    .use(middlewares)
    .handler(async (event) => {
      const result = await options.run({
        principal: scopes ? (principals.get(event) ?? principalOf(event)) : ANONYMOUS,
        body: event.body as TBody,
        rawBody: rawBodies.get(event) ?? null,
        headers: event.headers,
        pathParameters: event.pathParameters ?? {},
        requestId: event.requestContext.requestId,
      });
      return jsonResponse(result.statusCode, result.body, result.headers);
    });

  return (event: Event, context: Context): Promise<APIGatewayProxyResult> =>
    withRequestTelemetry(options.operationId, event.requestContext?.requestId ?? context.awsRequestId, () => {
      // The caller as the authorizer named it: who did what, without ever logging the token.
      const sub = event.requestContext?.authorizer?.principalId;
      if (typeof sub === 'string') addLogField('sub', sub);
      return handler(event, context);
    });
}
