/**
 * One request through the local gateway, in API Gateway's order: WAF's per-caller rate limit,
 * route, body limit, authorizer, proxy event, function, answer; and the issuer's JWKS, which the
 * gateway serves itself.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerRateKey } from '#infra/caller-rate-key.ts';
import { matchesMediaType } from '#shared/http/binary-media.ts';
import { allowHeader } from '#shared/http/method-not-allowed.ts';
import { routes } from '#shared/routes.ts';
import type { AccessLogEntry } from './access-log.ts';
import type { AuthorizerEmulation } from './authorizer-emulation.ts';
import type { CallerRateLimiter } from './caller-rate-limit.ts';
import {
  type Answer,
  GatewayError,
  gatewayAnswer,
  methodNotAllowedAnswer,
  preflightAnswer,
  writeAnswer,
} from './gateway-answer.ts';
import { type Invoker, invokeRoute } from './invoke.ts';
import { JWKS_PATH } from './issuer.ts';
import type { JwksAnswer } from './jwks-server.ts';
import { proxyEvent } from './proxy-event.ts';
import { hasBody, readBody } from './request-body.ts';
import { type Matched, type RequestTarget, Router, requestTarget } from './router.ts';

export interface PipelineOptions {
  readonly authorizer: AuthorizerEmulation;
  /** The per-caller limit WAF applies in front of the deployed API; none when absent. */
  readonly callerRateLimiter?: CallerRateLimiter | undefined;
  readonly integrationTimeoutMs: number;
  /** Media types passed base64-encoded (the API's `binaryMediaTypes`). */
  readonly binaryMediaTypes: readonly string[];
  readonly onRequest?: ((entry: AccessLogEntry) => void) | undefined;
  /** Origins allowed to call cross-origin (CORS preflight); none, CORS off, when absent or empty. */
  readonly corsAllowedOrigins?: readonly string[] | undefined;
}

export class RequestPipeline {
  /** The issuer's keys, once loaded: served before the modules are, since the authorizer fetches them. */
  jwks: JwksAnswer | undefined;
  /** Where functions run; set once the modules are loaded, requests wait until then. */
  private invoker: Invoker | undefined;
  private readonly router = new Router(routes);
  private readonly ready = Promise.withResolvers<void>();
  private readonly options: PipelineOptions;

  constructor(options: PipelineOptions) {
    this.options = options;
  }

  /** Starts dispatching to `invoker`; requests that arrived before wait for this. */
  setInvoker(invoker: Invoker): void {
    this.invoker = invoker;
    this.ready.resolve();
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const requestId = randomUUID();
    const method = req.method ?? 'GET';
    const target = requestTarget(req.url ?? '/');
    let operationId: string | undefined;
    let answer: Answer;
    try {
      if (method === 'GET' && target.path === JWKS_PATH && this.jwks !== undefined) {
        answer = this.jwks;
      } else {
        this.checkCallerRate(authorizationOf(req));
        if (this.invoker === undefined) await this.ready.promise;
        const invoker = this.invoker as unknown as Invoker;
        const matched = this.router.match(method, target.path);
        if (matched) {
          operationId = matched.route.operationId;
          answer = await this.dispatch(invoker, req, target, requestId, matched);
        } else {
          answer = this.unrouted(method, target.path, req.headers.origin, requestId);
        }
      }
    } catch (error) {
      answer = gatewayAnswer(error, requestId);
    }
    writeAnswer(res, answer, requestId);
    this.options.onRequest?.({
      requestId,
      method,
      path: target.path,
      status: answer.statusCode,
      ...(operationId === undefined ? {} : { operationId }),
      durationMs: Date.now() - started,
    });
  }

  /**
   * A request no route serves: on a known resource, a CORS preflight (when CORS is on) or 405
   * with `Allow`, as the resource's mock methods answer in the deployed API; elsewhere, 404.
   */
  private unrouted(method: string, path: string, origin: string | undefined, requestId: string): Answer {
    const resource = this.router.resourceOf(path);
    if (resource === undefined) {
      throw new GatewayError('MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token');
    }
    const origins = this.options.corsAllowedOrigins ?? [];
    const allow = allowHeader(routes, resource, origins.length > 0);
    if (method === 'OPTIONS' && origins.length > 0) return preflightAnswer(origins, origin, allow);
    return methodNotAllowedAnswer(allow, requestId);
  }

  /** WAF's rate-based rule, keyed on the Authorization header as WAF transforms it: 429 with Retry-After over the limit. */
  private checkCallerRate(authorization: string | undefined): void {
    const limiter = this.options.callerRateLimiter;
    if (limiter === undefined || authorization === undefined) return;
    const retryAfter = limiter.take(callerRateKey(authorization));
    if (retryAfter !== undefined) {
      throw new GatewayError('THROTTLED', 'Too Many Requests', 429, { 'retry-after': String(retryAfter) });
    }
  }

  private async dispatch(
    invoker: Invoker,
    req: IncomingMessage,
    target: RequestTarget,
    requestId: string,
    matched: Matched,
  ): Promise<Answer> {
    const { route } = matched;
    const method = req.method ?? 'GET';
    const body = hasBody(req) ? await readBody(req) : null;
    const authorizer =
      route.scopes === null
        ? null
        : await this.options.authorizer.authorize(authorizationOf(req), method, target.path);
    const binary = body !== null && this.isBinary(req.headers['content-type']);
    const event = proxyEvent({
      method,
      path: target.path,
      resource: route.path,
      resourceId: route.operationId,
      // The gateway tells the function the scheme the client used, in place of any a client named.
      headers: [...withoutLines(req.rawHeaders, 'x-forwarded-proto'), 'X-Forwarded-Proto', 'http'],
      query: target.query,
      pathParameters: matched.pathParameters,
      body: body === null ? null : body.toString(binary ? 'base64' : 'utf8'),
      isBase64Encoded: binary,
      authorizer,
      requestId,
      sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
      userAgent: req.headers['user-agent'] ?? null,
      protocol: `HTTP/${req.httpVersion}`,
      domainName: req.headers.host ?? '127.0.0.1',
    });
    const firstAccept = req.headers.accept?.split(',')[0];
    return invokeRoute(
      invoker,
      route,
      event,
      this.options.integrationTimeoutMs,
      matchesMediaType(firstAccept, this.options.binaryMediaTypes),
    );
  }

  private isBinary(contentType: string | undefined): boolean {
    return matchesMediaType(contentType, this.options.binaryMediaTypes);
  }
}

/** Header lines (`name, value, …`) without those of a name, in any case. */
function withoutLines(raw: readonly string[], lowerCaseName: string): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== lowerCaseName) kept.push(raw[i] as string, raw[i + 1] as string);
  }
  return kept;
}

/**
 * The Authorization header as API Gateway takes it from a request that repeats it: the last line,
 * as its proxy event's `headers` has it (Node's `req.headers` keeps the first). The function then
 * refuses the repetition, whichever line this was (docs/decisions/repeated-headers.md).
 */
function authorizationOf(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if ((raw[i] as string).toLowerCase() === 'authorization') return raw[i + 1];
  }
  return undefined;
}
