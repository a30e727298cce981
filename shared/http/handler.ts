import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { ValidateFunction } from 'ajv';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { hasExpired } from '../auth/token-time.ts';
import {
  InsufficientScopeError,
  InvalidParameterError,
  MalformedBodyError,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.ts';
import { requestTelemetry } from '../observability/telemetry.ts';
import { answeringBy } from '../request-deadline.ts';
import { ROUTE_SCOPES } from '../route-scopes.generated.js';
import type { OperationId } from '../routes.ts';
import { matchesMediaType } from './binary-media.ts';
import { canonicalPath } from './canonical-path.ts';
import { corsMiddleware, corsOriginsFromEnv } from './cors.ts';
import { parseForm } from './form-body.ts';
import { jsonResponse } from './problem.ts';
import { problemErrorHandler } from './problem-middleware.ts';
import { contentTypeOf, headerOf, headerValuesOf } from './request-headers.ts';
import { toViolations } from './validation.ts';

/** The authenticated caller, as the authorizer established it. */
export interface Principal {
  readonly sub: string;
  readonly scopes: readonly string[];
}

/** What a use case sees of an HTTP request: nothing of API Gateway beyond this. */
export interface HttpRequest<TBody> {
  readonly principal: Principal;
  readonly body: TBody;
  /**
   * The body text as sent (decoded if base64), for checks that need the JSON text (exact decimals).
   * Kept only on routes that take a JSON body; `null` on the others.
   */
  readonly rawBody: string | null;
  /** A header by its lower-case name, whatever case the client used (the last value of a repeated one). */
  header(lowerCaseName: string): string | undefined;
  /** Every value a header was sent with, one per header line, whatever case each line's name had. */
  headerValues(lowerCaseName: string): readonly string[];
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  /**
   * The query string's parameters, each given once: reading one the client repeated is a 400
   * (`?status=bogus&status=sold` would otherwise be `sold`, API Gateway's last value, the first
   * unread). A parameter that may be repeated is read with {@link queryValues}.
   */
  readonly query: Readonly<Record<string, string | undefined>>;
  /** Every value of a query parameter, in the order sent (`?tags=a&tags=b`), as API Gateway lists them. */
  queryValues(name: string): readonly string[];
  readonly requestId: string;
  /**
   * The API's base URL as the client addressed it: scheme, host and the stage or base path before
   * the route's path (`https://<api>/prod`; `http://127.0.0.1:3000` locally), without a final slash.
   */
  baseUrl(): string;
  /** Epoch ms at which the function times out (Lambda's remaining time when the request came in). */
  readonly timesOutAt: number;
}

/** A successful outcome; errors are thrown as typed errors instead. */
export interface HttpResult {
  readonly statusCode: number;
  /** JSON, or bytes (sent base64-encoded, with the Content-Type `headers` give them). */
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

type Event = APIGatewayProxyEvent;
type Middleware = MiddlewareObj<Event, APIGatewayProxyResult, Error, Context>;

/**
 * The body text as received, kept on the event beside the parsed body, for checks on the JSON
 * text itself.
 */
const RAW_BODY = Symbol('rawBody');
/** The caller, as {@link requireScopes} read it, kept on the event for the handler likewise. */
const PRINCIPAL = Symbol('principal');
/** The body's bytes, on routes that take bytes ({@link bytesBody}). */
const BYTES = Symbol('bytes');
/** The form's fields, on the route that takes a form ({@link formBody}). */
const FORM = Symbol('form');
type ParsedEvent = Event & {
  [RAW_BODY]?: string | null;
  [PRINCIPAL]?: Principal;
  [BYTES]?: Buffer;
  [FORM]?: Readonly<Record<string, string | undefined>>;
};

/**
 * A copy of a parameter map without a prototype: a parameter a client names after an
 * `Object.prototype` member (`constructor`, `toString`) is then absent or its own value, never the
 * inherited function, whether the event was built locally or parsed from API Gateway's JSON.
 */
function withoutPrototype(
  map: Readonly<Record<string, string | undefined>> | null,
): Readonly<Record<string, string | undefined>> {
  return Object.assign(Object.create(null), map);
}

/** The query's parameters as {@link HttpRequest.query} reads them: a repeated one throws when read. */
function singleValuedQuery(event: Event): Readonly<Record<string, string | undefined>> {
  const query = withoutPrototype(event.queryStringParameters);
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (values === undefined || values.length < 2 || !Object.hasOwn(query, name)) continue;
    Object.defineProperty(query, name, {
      enumerable: true,
      get() {
        throw new InvalidParameterError(
          `${name} may be given once; the query gives it ${values.length} times`,
        );
      },
    });
  }
  return query;
}

/**
 * The caller's identity and scopes, taken only from the authorizer's context, while the token
 * lasts. API Gateway reuses the authorizer's answer for a token for its cache TTL whatever the
 * token's `exp`, so the `exp` the authorizer passes on is checked here, on every request, by
 * the same clock rule as the authorizer's; an answer without one is refused.
 */
export function principalOf(event: Event): Principal {
  const authorizer = event.requestContext.authorizer;
  const sub = authorizer?.principalId;
  if (typeof sub !== 'string' || sub === '') {
    throw new UnauthenticatedError('No authenticated caller');
  }
  // A number from the authorizer, a string once API Gateway passed it on.
  const exp = Number(authorizer?.exp ?? Number.NaN);
  if (!Number.isFinite(exp) || hasExpired(exp, Date.now())) {
    throw new UnauthenticatedError('The access token has expired');
  }
  const scope = authorizer?.scope;
  return { sub, scopes: typeof scope === 'string' && scope !== '' ? scope.split(' ') : [] };
}

/**
 * Re-checks the route's scopes in the function itself: defence in depth behind the authorizer.
 * First, the Authorization header must have come once: API Gateway hands the authorizer one of
 * several lines (and `headers` the last), so with two tokens the caller would be whichever the
 * gateway picked. Every line is in `multiValueHeaders`, so the refusal does not depend on that
 * pick, locally or deployed (docs/decisions/repeated-headers.md).
 */
const requireScopes = (scopes: readonly string[]): Middleware => ({
  before: ({ event }) => {
    if (headerValuesOf(event, 'authorization').length > 1) {
      throw new InvalidParameterError('Authorization must be sent once, with one token');
    }
    const principal = principalOf(event);
    if (!scopes.every((scope) => principal.scopes.includes(scope))) throw new InsufficientScopeError(scopes);
    (event as ParsedEvent)[PRINCIPAL] = principal;
  },
});

/** The caller of a public route: nobody in particular. */
const ANONYMOUS: Principal = { sub: '', scopes: [] };

/**
 * Parses the JSON body with middy's parser, translating its errors into ours, and validates it
 * with a generated standalone validator. The parser refuses, at any depth, a `__proto__` key, and a
 * `constructor` key whose value has its own `prototype` property; any other `constructor` passes
 * to the validator.
 */
const jsonBody = (validate: ValidateFunction): Middleware => {
  const parser = httpJsonBodyParser();
  return {
    before: (request) => {
      const event: ParsedEvent = request.event;
      const text = event.body;
      // The JSON text itself, also when an API with binary media types passes it base64-encoded.
      const rawBody =
        event.isBase64Encoded && typeof text === 'string'
          ? Buffer.from(text, 'base64').toString('utf8')
          : text;
      event[RAW_BODY] = rawBody;
      // middy's parser reads the header only as `content-type` or `Content-Type`: any other casing
      // is copied under the lower-case name.
      const contentType = contentTypeOf(event);
      if (contentType !== undefined) {
        event.headers = Object.assign(Object.create(null), event.headers, { 'content-type': contentType });
      }
      try {
        parser.before?.(request as never);
      } catch (error) {
        throw translateParserError(error, rawBody ?? '');
      }
      const body: unknown = event.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new MalformedBodyError('The request body must be a JSON object');
      }
      if (!validate(body)) throw new ValidationError(toViolations(validate.errors));
    },
  };
};

/**
 * The body as bytes, for an operation that takes an upload: only a binary media type
 * (shared/http/binary-media.ts) reaches the function byte for byte (base64); any other arrives as
 * UTF-8 text, its bytes already lost, so it is refused before anything looks at them.
 */
const bytesBody = (): Middleware => ({
  before: ({ event }) => {
    if (!matchesMediaType(contentTypeOf(event))) {
      throw new UnsupportedMediaTypeError(
        'Send the bytes with Content-Type application/octet-stream (or the image/* type of the image)',
      );
    }
    const body = event.body ?? '';
    (event as ParsedEvent)[BYTES] = Buffer.from(body, event.isBase64Encoded ? 'base64' : 'utf8');
  },
});

/** The body as a form's fields (shared/http/form-body.ts), on an operation that may take one. */
const formBody = (fields: readonly string[]): Middleware => ({
  before: ({ event }) => {
    const text =
      event.isBase64Encoded && typeof event.body === 'string'
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
    (event as ParsedEvent)[FORM] = parseForm(text, contentTypeOf(event), fields);
  },
});

/**
 * The API's base URL as the client addressed it: API Gateway's `requestContext.path` is the path
 * as sent (stage or custom domain base path first), `path` the route's part of it; the scheme is
 * the one the last hop names in `X-Forwarded-Proto` (https when deployed; the local gateway's http,
 * which replaces any line a client sent): the last value of the last line, as a hop that appends
 * its own puts it after the client's.
 */
function baseUrlOf(event: Event): string {
  const context = event.requestContext;
  const sent = context.path ?? event.path;
  const base = sent.endsWith(event.path) ? sent.slice(0, sent.length - event.path.length) : '';
  const forwarded = headerValuesOf(event, 'x-forwarded-proto').at(-1)?.split(',').at(-1)?.trim();
  const scheme = forwarded === 'http' ? 'http' : 'https';
  return `${scheme}://${context.domainName}${base}`;
}

/** A body of bytes as API Gateway takes it from a Lambda proxy integration: base64, so flagged. */
function bytesResponse(
  statusCode: number,
  body: Uint8Array,
  headers: Record<string, string> | undefined,
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store', ...headers },
    body: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64'),
    isBase64Encoded: true,
  };
}

/**
 * Our error for one of middy's parser's. A 422 on text that is valid JSON can only be its
 * forbidden-key refusal, which names the key in `cause.data` (middy's `{ package, data }` cause);
 * told apart so, not by its message, which no middy release promises to keep.
 */
function translateParserError(error: unknown, text: string): Error {
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 415) {
    return new UnsupportedMediaTypeError('Send the body as JSON with Content-Type: application/json');
  }
  if (status === 422) {
    if (!isJson(text)) return new MalformedBodyError('The request body is not valid JSON');
    const key = (error as { cause?: { data?: unknown } }).cause?.data;
    return new ValidationError([{ pointer: `/${String(key)}`, detail: 'is not allowed' }]);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Whether `text` parses as JSON (only asked on the rare path of a refused body). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export interface HttpHandlerOptions<TBody> {
  /** The operation served: its scopes come from the route table (as generated for run time). */
  readonly operationId: OperationId;
  /** The generated validator of the JSON body, for operations that take one. */
  readonly body?: ValidateFunction;
  /** The body as bytes (a `Buffer`), for an operation that takes an upload instead of JSON. */
  readonly bytes?: true;
  /** The fields a form body may give, for an operation that takes one; the body is then those fields. */
  readonly form?: readonly string[];
  /** The use case: gets a validated request, returns a result or throws a typed error. */
  readonly run: (request: HttpRequest<TBody>) => Promise<HttpResult>;
}

/**
 * Wraps a use case into an API Gateway (REST, proxy) Lambda handler: scopes re-checked, body
 * parsed and validated, and every error turned into problem+json by the one error handler,
 * registered before all but CORS so that its `onError` runs after theirs.
 */
export function httpHandler<TBody = undefined>(options: HttpHandlerOptions<TBody>) {
  const scopes = ROUTE_SCOPES[options.operationId];
  const corsOrigins = corsOriginsFromEnv();
  // CORS first, so that its `after` and `onError` run last: on problem answers too.
  const middlewares: Middleware[] = corsOrigins.length > 0 ? [corsMiddleware(corsOrigins)] : [];
  middlewares.push(problemErrorHandler(), canonicalPath());
  if (scopes) middlewares.push(requireScopes(scopes));
  if (options.body) middlewares.push(jsonBody(options.body));
  if (options.bytes) middlewares.push(bytesBody());
  if (options.form) middlewares.push(formBody(options.form));

  // No early-timeout timer: a function about to time out is answered by the gateway's DEFAULT_5XX
  // problem all the same.
  const handler = middy<Event, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 })
    .use(middlewares)
    .handler(async (event: ParsedEvent, context: Context) => {
      const result = await options.run({
        principal: event[PRINCIPAL] ?? ANONYMOUS,
        body: (options.bytes ? event[BYTES] : options.form ? event[FORM] : event.body) as TBody,
        rawBody: event[RAW_BODY] ?? null,
        header: (name) => headerOf(event.headers, name),
        headerValues: (name) => headerValuesOf(event, name),
        pathParameters: withoutPrototype(event.pathParameters),
        query: singleValuedQuery(event),
        queryValues: (name) => {
          const multi = event.multiValueQueryStringParameters;
          const values = multi && Object.hasOwn(multi, name) ? multi[name] : undefined;
          if (values) return values;
          const single = event.queryStringParameters;
          const value = single && Object.hasOwn(single, name) ? single[name] : undefined;
          return value === undefined ? [] : [value];
        },
        requestId: event.requestContext.requestId,
        baseUrl: () => baseUrlOf(event),
        timesOutAt: Date.now() + context.getRemainingTimeInMillis(),
      });
      return result.body instanceof Uint8Array
        ? bytesResponse(result.statusCode, result.body, result.headers)
        : jsonResponse(result.statusCode, result.body, result.headers);
    });

  const telemetry = requestTelemetry(options.operationId);
  return (event: Event, context: Context): Promise<APIGatewayProxyResult> => {
    // The caller as the authorizer named it: who did what, without ever logging the token.
    const sub = event.requestContext?.authorizer?.principalId;
    return telemetry(
      {
        requestId: event.requestContext?.requestId ?? context.awsRequestId,
        sub: typeof sub === 'string' ? sub : undefined,
      },
      context,
      () => answeringBy(Date.now() + context.getRemainingTimeInMillis(), () => handler(event, context)),
    );
  };
}
