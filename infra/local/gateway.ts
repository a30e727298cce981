/**
 * The local gateway: an HTTP server that stands in for the deployed API Gateway REST API and
 * runs the very modules Lambda runs (the TOKEN authorizer and each route's handler), with real
 * DynamoDB (Local) behind them. It imitates the gateway, not the functions: routing from
 * `shared/routes.ts`, the authorizer call and its cache, policy evaluation, the 10 MB limit, the
 * proxy (v1) event, and the gateway responses of `shared/http/gateway-responses.ts`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http';
import { type AddressInfo, Socket } from 'node:net';
import { join, resolve as resolvePath } from 'node:path';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { authorizerEnvironment, defaultServiceSettings, functionEnvironment } from '#infra/environment.ts';
import { isAllowed, methodArnFor } from '#shared/auth/policy.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { type GatewayResponse, renderGatewayResponse } from '#shared/http/gateway-responses.ts';
import { type Route, routes, type TableName } from '#shared/routes.ts';
import { ensureTables, LOCAL_AWS_ENV, startDynamoDbLocal } from './dynamodb-local.ts';
import { defaultPort, JWKS_PATH, LOCAL_AUDIENCE, loadOrCreateLocalKeys, localIssuerUrl } from './issuer.ts';
import { localStateDir } from './state.ts';

/** API Gateway's payload limit (a hard quota of REST APIs). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** What the local "deployment" is called in method ARNs and request contexts. */
const STAGE = 'local';
const ACCOUNT_ID = '000000000000';
const API_ID = 'local';

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type AuthorizerHandler = (
  event: APIGatewayTokenAuthorizerEvent,
  context: Context,
) => Promise<APIGatewayAuthorizerResult>;

export interface LocalStackOptions {
  /** TCP port of the gateway; 0 for any free one. {@link defaultPort} when absent. */
  readonly port?: number;
  /** Interface to listen on; 127.0.0.1 keeps the API off the network. */
  readonly host?: string;
  /** Directory where DynamoDB Local keeps its data; in memory when absent. */
  readonly dbPath?: string;
  /** Port of DynamoDB Local, for tools that want a fixed one; any free port when absent. */
  readonly dynamodbPort?: number;
  /** An already running DynamoDB (Local) to use instead of starting one; `dbPath` is then ignored. */
  readonly dynamodbEndpoint?: string;
  /** Physical table names are `<prefix>-<table>`. */
  readonly tablePrefix?: string;
  /** Issuer keys and the `stack-<port>.json` record live here; {@link localStateDir} when absent. */
  readonly stateDir?: string;
  /** How long an authorizer answer is reused for the same token, as API Gateway caches it; 0 turns caching off. */
  readonly authorizerCacheTtlSeconds?: number;
  /** API Gateway's integration timeout: a handler slower than this gets the client a 504. */
  readonly integrationTimeoutMs?: number;
  /** Media types passed base64-encoded (the API's `binaryMediaTypes`); every body is text when empty. */
  readonly binaryMediaTypes?: readonly string[];
  /** Called once per answered request, e.g. to print an access log. */
  readonly onRequest?: (entry: AccessLogEntry) => void;
}

export interface AccessLogEntry {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The operation served; absent when the gateway answered on its own before any function. */
  readonly operationId?: string;
  readonly durationMs: number;
}

export interface LocalStack {
  readonly baseUrl: string;
  readonly port: number;
  readonly dynamodbEndpoint: string;
  /** PID of the DynamoDB Local (Java) process this stack started; absent when it uses another. */
  readonly dynamodbPid?: number;
  /** The environment the functions run with (also set on `process.env`). */
  readonly env: Readonly<Record<string, string>>;
  /** Modules that failed to load, by name; their routes answer 5xx as a function failing its init would. */
  readonly loadErrors: Readonly<Record<string, string>>;
  /** Stops the server, then DynamoDB Local if this stack started it, and removes the stack record. */
  stop(): Promise<void>;
}

/** What `<stateDir>/stack-<port>.json` holds while a stack runs: how other local tools find it. */
export interface RunningStack {
  readonly baseUrl: string;
  readonly pid: number;
  readonly dynamodbEndpoint: string;
  readonly dynamodbPid?: number;
  readonly env: Readonly<Record<string, string>>;
}

// Handler modules read their environment once, at load, and ES modules cannot be unloaded: a
// second stack in the same process would silently run with the first one's tables and issuer.
let stackStarted = false;

/**
 * Starts the local stack: the gateway on `host:port` (listening first, so that port 0 yields the
 * port the issuer is named after), DynamoDB Local with the tables, the issuer's keys, then the
 * function environment on `process.env`, and only then the authorizer and handler modules.
 * One stack per process.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  if (stackStarted)
    throw new Error('A local stack was already started in this process; start another process');
  const stateDir = options.stateDir ?? localStateDir();
  const host = options.host ?? '127.0.0.1';
  const gateway = new Gateway(options);
  const server = createServer((req, res) => {
    gateway.serve(req, res).catch((error: unknown) => {
      logFunctionError('gateway', undefined, error);
      res.destroy();
    });
  });
  await listen(server, options.port ?? defaultPort(), host);
  stackStarted = true;
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://${connectHost(host)}:${port}`;

  // Undone in reverse order, after the server stops taking requests.
  const cleanups: Array<() => Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await closeServer(server);
      for (const cleanup of cleanups.reverse()) await cleanup();
    })();
    return stopping;
  };
  try {
    let dynamodbEndpoint = options.dynamodbEndpoint;
    let dynamodbPid: number | undefined;
    if (dynamodbEndpoint === undefined) {
      const dbPath = options.dbPath === undefined ? undefined : resolvePath(options.dbPath);
      // DynamoDB Local refuses a -dbPath that does not exist.
      if (dbPath !== undefined) await mkdir(dbPath, { recursive: true });
      const dynamo = await startDynamoDbLocal({
        ...(options.dynamodbPort === undefined ? {} : { port: options.dynamodbPort }),
        ...(dbPath === undefined ? {} : { dbPath }),
      });
      dynamodbEndpoint = dynamo.endpoint;
      const guard = guardDynamoDbLocal(dynamo.endpoint);
      dynamodbPid = guard.pid;
      cleanups.push(async () => {
        await dynamo.stop();
        guard.dismiss();
      });
    }

    const tableEnv = await ensureTables(dynamodbEndpoint, options.tablePrefix ?? 'local');
    const keys = await loadOrCreateLocalKeys(stateDir);
    gateway.jwks = JSON.stringify(keys.publicJwks);

    const tableNames = Object.fromEntries(
      Object.entries(tables).map(([name, definition]) => [name, tableEnv[definition.envVar]]),
    ) as Record<TableName, string>;
    const env: Record<string, string> = {
      ...LOCAL_AWS_ENV,
      DYNAMODB_ENDPOINT: dynamodbEndpoint,
      ...tableEnv,
      ...Object.assign(
        {},
        ...routes.map((route) => functionEnvironment(route, defaultServiceSettings, tableNames)),
      ),
      ...authorizerEnvironment({
        issuer: localIssuerUrl(port),
        audience: LOCAL_AUDIENCE,
        jwksUrl: `${baseUrl}${JWKS_PATH}`,
      }),
    };
    Object.assign(process.env, env);
    const loadErrors = await gateway.loadModules();

    const record: RunningStack = {
      baseUrl,
      pid: process.pid,
      dynamodbEndpoint,
      ...(dynamodbPid === undefined ? {} : { dynamodbPid }),
      env,
    };
    const recordPath = stackRecordPath(stateDir, port);
    await writeAtomically(recordPath, `${JSON.stringify(record, null, 2)}\n`);
    cleanups.push(() => removeOwnRecord(recordPath));

    return {
      baseUrl,
      port,
      dynamodbEndpoint,
      ...(dynamodbPid === undefined ? {} : { dynamodbPid }),
      env,
      loadErrors,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The local stack running on `port` as its `stack-<port>.json` record describes it, or
 * `undefined` when none runs there (no record, or one left by a process that is gone).
 */
export async function readRunningStack(
  port: number = defaultPort(),
  stateDir: string = localStateDir(),
): Promise<RunningStack | undefined> {
  let text: string;
  try {
    text = await readFile(stackRecordPath(stateDir, port), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const record = JSON.parse(text) as RunningStack;
  return isAlive(record.pid) ? record : undefined;
}

/** Where the stack on `port` records itself. */
export function stackRecordPath(stateDir: string, port: number): string {
  return join(stateDir, `stack-${port}.json`);
}

interface LoadedRoute {
  readonly route: Route;
  /** Per segment of the resource path: the literal it must equal, or the path parameter it binds. */
  readonly segments: readonly ({ readonly literal: string } | { readonly parameter: string })[];
  handler?: ProxyHandler;
}

interface Matched {
  readonly loaded: LoadedRoute;
  readonly pathParameters: Record<string, string> | null;
}

interface CachedAuthorization {
  readonly expiresAt: number;
  readonly result: Promise<Authorization>;
}

/** Where a request goes: its path as the URL parser normalises it, and its query. */
interface RequestTarget {
  readonly path: string;
  readonly query: URLSearchParams | null;
}

/** A gateway response or a function's result, ready to be written. */
interface Answer {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer | string;
}

class GatewayError extends Error {
  readonly type: GatewayResponse['type'];
  readonly status: number | undefined;
  constructor(type: GatewayResponse['type'], message: string, status?: number) {
    super(message);
    this.type = type;
    this.status = status;
  }
}

/** The request pipeline; its modules are loaded by {@link Gateway.loadModules}. */
class Gateway {
  /** The issuer's public JWKS, once loaded: served before the modules are, since the authorizer fetches it. */
  jwks: string | undefined;
  private readonly options: LocalStackOptions;
  private readonly routes: LoadedRoute[];
  /** Routes without path parameters by `METHOD path`: most requests are found without a scan. */
  private readonly literalRoutes = new Map<string, LoadedRoute>();
  private readonly parameterRoutes: LoadedRoute[];
  private readonly authorizations = new Map<string, CachedAuthorization>();
  private authorizer: AuthorizerHandler | undefined;
  private loadErrors: Record<string, string> = {};
  private readonly ready = Promise.withResolvers<void>();
  private loaded = false;

  constructor(options: LocalStackOptions) {
    this.options = options;
    this.routes = routes.map((route) => ({
      route,
      segments: route.path
        .split('/')
        .slice(1)
        .map((segment) => {
          const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
          return parameter === undefined ? { literal: segment } : { parameter };
        }),
    }));
    for (const loaded of this.routes) {
      const key = `${loaded.route.method} ${loaded.route.path}`;
      const literal = loaded.segments.every((segment) => 'literal' in segment);
      // The first of two identical routes wins, as in the scan below.
      if (literal && !this.literalRoutes.has(key)) this.literalRoutes.set(key, loaded);
    }
    this.parameterRoutes = this.routes.filter((loaded) => loaded.segments.some((s) => 'parameter' in s));
  }

  /** Imports the authorizer and every handler once; a module that fails to load is reported, not fatal. */
  async loadModules(): Promise<Record<string, string>> {
    const load = async (name: string): Promise<unknown> => {
      try {
        const module = (await import(
          new URL(`../../functions/${name}/handler.ts`, import.meta.url).href
        )) as {
          handler?: unknown;
        };
        if (typeof module.handler !== 'function') throw new Error('exports no `handler` function');
        return module.handler;
      } catch (error) {
        this.loadErrors[name] = error instanceof Error ? error.message : String(error);
        return undefined;
      }
    };
    this.authorizer = (await load('authorizer')) as AuthorizerHandler | undefined;
    await Promise.all(
      this.routes.map(async (loaded) => {
        loaded.handler = (await load(loaded.route.functionDir)) as ProxyHandler | undefined;
      }),
    );
    this.loaded = true;
    this.ready.resolve();
    return this.loadErrors;
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
        answer = {
          statusCode: 200,
          headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'max-age=300' },
          body: this.jwks,
        };
      } else {
        if (!this.loaded) await this.ready.promise;
        const matched = this.match(method, target.path);
        if (!matched) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token');
        operationId = matched.loaded.route.operationId;
        answer = await this.invoke(req, target, requestId, matched);
      }
    } catch (error) {
      answer = gatewayAnswer(error, requestId);
    }
    this.write(res, answer, requestId);
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
   * The route serving `method` and `path`: literal segments must be equal, `{name}` segments take
   * any one non-empty segment, and a literal match is preferred over a parameter, as in API Gateway.
   */
  private match(method: string, path: string): Matched | undefined {
    // API Gateway ignores one trailing slash: /api/v3/pet/ is /api/v3/pet.
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    // All literal segments is the best match there can be.
    const literal = this.literalRoutes.get(`${method} ${trimmed}`);
    if (literal) return { loaded: literal, pathParameters: null };
    const segments = trimmed.split('/').slice(1);
    let best: { matched: Matched; literals: number } | undefined;
    for (const loaded of this.parameterRoutes) {
      if (loaded.route.method !== method || loaded.segments.length !== segments.length) continue;
      const parameters: Record<string, string> = {};
      let literals = 0;
      const fits = loaded.segments.every((template, i) => {
        const segment = segments[i] as string;
        if ('literal' in template) {
          literals++;
          return template.literal === segment;
        }
        parameters[template.parameter] = decodeSegment(segment);
        return segment !== '';
      });
      if (fits && (!best || literals > best.literals)) {
        const pathParameters = Object.keys(parameters).length > 0 ? parameters : null;
        best = { matched: { loaded, pathParameters }, literals };
      }
    }
    return best?.matched;
  }

  private async invoke(
    req: IncomingMessage,
    target: RequestTarget,
    requestId: string,
    matched: Matched,
  ): Promise<Answer> {
    const { route, handler } = matched.loaded;
    const body = hasBody(req) ? await readBody(req) : null;
    const authorizer = route.scopes === null ? null : await this.authorize(req, target.path);
    if (!handler) {
      throw new GatewayError('DEFAULT_5XX', `${route.functionDir} failed to load`, 502);
    }
    const event = this.proxyEvent(req, target, requestId, matched, body, authorizer);
    const context = lambdaContext(`local-${route.operationId}`, this.integrationTimeoutMs());
    let result: unknown;
    try {
      result = await withTimeout(Promise.resolve(handler(event, context)), this.integrationTimeoutMs());
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      logFunctionError(route.functionDir, requestId, error);
      throw new GatewayError('DEFAULT_5XX', 'Internal server error', 502);
    }
    return proxyAnswer(result, route.functionDir, requestId);
  }

  /**
   * What API Gateway does with a TOKEN authorizer: no Authorization header means 401 without a
   * call; otherwise the authorizer's answer (cached by token) must be a policy allowing this
   * request's method ARN. Returns the authorizer context the function receives.
   */
  private async authorize(req: IncomingMessage, path: string): Promise<Record<string, string | number>> {
    const token = req.headers.authorization;
    if (token === undefined || token.trim() === '') throw new GatewayError('UNAUTHORIZED', 'Unauthorized');
    const methodArn = methodArnFor({
      region: LOCAL_AWS_ENV.AWS_REGION,
      accountId: ACCOUNT_ID,
      apiId: API_ID,
      stage: STAGE,
      method: req.method ?? 'GET',
      path,
    });
    const authorizeStarted = Date.now();
    let authorization: Authorization;
    try {
      authorization = await this.authorization(token, methodArn);
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') {
        throw new GatewayError('UNAUTHORIZED', 'Unauthorized');
      }
      if (!(error instanceof GatewayError)) logFunctionError('authorizer', undefined, error);
      throw new GatewayError('DEFAULT_5XX', 'AuthorizerConfigurationException', 500);
    }
    if (!authorization.allows(methodArn)) {
      throw new GatewayError(
        'ACCESS_DENIED',
        'User is not authorized to access this resource with an explicit deny',
      );
    }
    return {
      principalId: authorization.result.principalId,
      ...authorization.context(),
      integrationLatency: Date.now() - authorizeStarted,
    };
  }

  /** The authorizer's answer for a token; concurrent requests with one token share one call. */
  private authorization(token: string, methodArn: string): Promise<Authorization> {
    const now = Date.now();
    const cached = this.authorizations.get(token);
    if (cached && cached.expiresAt > now) return cached.result;
    const authorizer = this.authorizer;
    if (!authorizer) return Promise.reject(new GatewayError('DEFAULT_5XX', 'authorizer failed to load', 500));
    const result = authorizer(
      { type: 'TOKEN', authorizationToken: token, methodArn },
      lambdaContext('local-authorizer'),
    ).then((answer) => new Authorization(checkAuthorizerResult(answer)));
    const ttlMs = (this.options.authorizerCacheTtlSeconds ?? 300) * 1000;
    if (ttlMs > 0) {
      this.pruneAuthorizations(now);
      this.authorizations.set(token, { expiresAt: now + ttlMs, result });
      // API Gateway caches policies, not failures: the next request with this token asks again.
      result.catch(() => this.authorizations.delete(token));
    }
    return result;
  }

  /** Keeps the cache bounded by the tokens of the last TTL, however many a long session sends. */
  private pruneAuthorizations(now: number): void {
    if (this.authorizations.size < 1000) return;
    for (const [token, entry] of this.authorizations) {
      if (entry.expiresAt <= now) this.authorizations.delete(token);
    }
  }

  private proxyEvent(
    req: IncomingMessage,
    target: RequestTarget,
    requestId: string,
    matched: Matched,
    body: Buffer | null,
    authorizer: Record<string, string | number> | null,
  ): APIGatewayProxyEvent {
    const { route } = matched.loaded;
    const method = req.method ?? 'GET';
    const { headers, multiValueHeaders } = eventHeaders(req.rawHeaders);
    const { query, multiValueQuery } = eventQuery(target.query);
    const binary = body !== null && this.isBinary(req.headers['content-type']);
    const now = new Date();
    return {
      resource: route.path,
      path: target.path,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters: query,
      multiValueQueryStringParameters: multiValueQuery,
      pathParameters: matched.pathParameters,
      stageVariables: null,
      body: body === null ? null : body.toString(binary ? 'base64' : 'utf8'),
      isBase64Encoded: binary,
      requestContext: {
        accountId: ACCOUNT_ID,
        apiId: API_ID,
        authorizer,
        domainName: req.headers.host ?? '127.0.0.1',
        domainPrefix: '127',
        extendedRequestId: requestId,
        httpMethod: method,
        identity: callerIdentity(req.socket.remoteAddress ?? '127.0.0.1', req.headers['user-agent'] ?? null),
        path: target.path,
        protocol: `HTTP/${req.httpVersion}`,
        requestId,
        requestTime: requestTime(now),
        requestTimeEpoch: now.getTime(),
        resourceId: route.operationId,
        resourcePath: route.path,
        stage: STAGE,
      },
    };
  }

  private isBinary(contentType: string | undefined): boolean {
    const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
    if (mediaType === undefined) return false;
    return (this.options.binaryMediaTypes ?? []).some((pattern) => {
      const [type, subtype] = pattern.toLowerCase().split('/');
      const [actualType, actualSubtype] = mediaType.split('/');
      return (type === '*' || type === actualType) && (subtype === '*' || subtype === actualSubtype);
    });
  }

  private integrationTimeoutMs(): number {
    return this.options.integrationTimeoutMs ?? 29_000;
  }

  private write(res: ServerResponse, answer: Answer, requestId: string): void {
    res.writeHead(answer.statusCode, {
      ...answer.headers,
      'content-length': String(Buffer.byteLength(answer.body)),
      'x-amzn-requestid': requestId,
    });
    res.end(answer.body);
  }
}

/**
 * An authorizer's answer as it is cached for its token, with what every request derives from it
 * worked out once: whether the policy allows a method ARN, and the context functions receive.
 */
class Authorization {
  readonly result: APIGatewayAuthorizerResult;
  private readonly decisions = new Map<string, boolean>();
  private contextStrings: Record<string, string> | undefined;

  constructor(result: APIGatewayAuthorizerResult) {
    this.result = result;
  }

  allows(methodArn: string): boolean {
    let allowed = this.decisions.get(methodArn);
    if (allowed === undefined) {
      allowed = isAllowed(this.result.policyDocument, methodArn);
      // Method ARNs carry path parameter values: a token calling many ids must not grow this forever.
      if (this.decisions.size < 100) this.decisions.set(methodArn, allowed);
    }
    return allowed;
  }

  /** The context for one request; a context functions cannot receive fails every request again. */
  context(): Readonly<Record<string, string>> {
    this.contextStrings ??= authorizerContext(this.result.context);
    return this.contextStrings;
  }
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

/** Path characters the URL parser keeps as they are, after one `/` (`//` would start an authority). */
const PLAIN_PATH = /^\/(?!\/)[\w\-.~!$&'()*+,;=:@%/]*$/;
/** A segment the URL parser may resolve (`.`, `..`, `%2e`…), conservatively: any segment starting so. */
const DOT_SEGMENT = /\/(?:\.|%2e)/i;

/**
 * The path and query of a request target, as `new URL(target, base)` gives them. The common case,
 * an origin-form path without query, dot segments or characters the parser would encode, is the
 * pathname unchanged and is taken as it is: a URL object and its search params cost more than
 * the rest of the routing.
 */
function requestTarget(target: string): RequestTarget {
  if (PLAIN_PATH.test(target) && !DOT_SEGMENT.test(target)) return { path: target, query: null };
  const url = new URL(target, 'http://localhost');
  return { path: url.pathname, query: url.searchParams };
}

/** Whether the request has a body at all: HTTP/1.1 announces one by Content-Length or Transfer-Encoding. */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

/**
 * How much of an oversized body is still read, and dropped, after the 413: clients send their
 * whole body before they read the answer, so closing at once would show them a broken pipe
 * instead of the 413. Past this, the connection is cut.
 */
const MAX_DRAIN_BYTES = 4 * MAX_BODY_BYTES;

/**
 * The body, or `null` when there is none. Refuses more than {@link MAX_BODY_BYTES} as soon as the
 * declared length or the bytes received exceed it, keeping nothing from there on.
 */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    drain(req);
    return Promise.reject(new GatewayError('REQUEST_TOO_LARGE', 'Request Too Long'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      chunks.length = 0;
      drain(req);
      reject(new GatewayError('REQUEST_TOO_LARGE', 'Request Too Long'));
    };
    req.on('data', onData);
    req.once('end', () => resolve(size === 0 ? null : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

/** Reads and drops the rest of a refused body, up to {@link MAX_DRAIN_BYTES}; then cuts the connection. */
function drain(req: IncomingMessage): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DRAIN_BYTES) req.socket.destroy();
  });
  req.resume();
}

/** Headers as sent, names in the client's spelling: the last value in `headers`, all in `multiValueHeaders`. */
function eventHeaders(rawHeaders: readonly string[]): {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
} {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  return { headers, multiValueHeaders };
}

function eventQuery(params: URLSearchParams | null): {
  query: Record<string, string> | null;
  multiValueQuery: Record<string, string[]> | null;
} {
  if (params === null || params.size === 0) return { query: null, multiValueQuery: null };
  const query: Record<string, string> = {};
  const multiValueQuery: Record<string, string[]> = {};
  for (const [name, value] of params) {
    query[name] = value;
    multiValueQuery[name] = [...(multiValueQuery[name] ?? []), value];
  }
  return { query, multiValueQuery };
}

/** A path parameter as the function sees it: percent-decoded, or as sent when that is not possible. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Only a policy and a principal make an authorizer answer; anything else is what API Gateway
 * reports as AuthorizerConfigurationException (500).
 */
function checkAuthorizerResult(result: unknown): APIGatewayAuthorizerResult {
  const candidate = result as Partial<APIGatewayAuthorizerResult> | null | undefined;
  if (
    typeof candidate?.principalId !== 'string' ||
    typeof candidate.policyDocument !== 'object' ||
    candidate.policyDocument === null ||
    candidate.policyDocument.Statement === undefined
  ) {
    throw new GatewayError('DEFAULT_5XX', 'AuthorizerConfigurationException', 500);
  }
  return candidate as APIGatewayAuthorizerResult;
}

/** The authorizer's context as functions receive it: scalars only, numbers and booleans as strings. */
function authorizerContext(context: APIGatewayAuthorizerResult['context']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(context ?? {})) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object')
      throw new GatewayError('DEFAULT_5XX', 'AuthorizerConfigurationException', 500);
    out[key] = String(value);
  }
  return out;
}

/** A function's result on the wire; a result API Gateway could not read is its 502. */
function proxyAnswer(result: unknown, functionDir: string, requestId: string): Answer {
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
    body: isBase64Encoded ? Buffer.from(body ?? '', 'base64') : (body ?? ''),
  };
}

function gatewayAnswer(error: unknown, requestId: string): Answer {
  if (!(error instanceof GatewayError)) logFunctionError('gateway', requestId, error);
  const { type, status, message } =
    error instanceof GatewayError
      ? error
      : { type: 'DEFAULT_5XX' as const, status: 500, message: 'Internal error' };
  return renderGatewayResponse(type, {
    requestId,
    errorMessage: message,
    ...(status === undefined ? {} : { status }),
  });
}

// One promise and one timer per invocation: Promise.race and finally would add three promises more.
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new GatewayError('DEFAULT_5XX', 'Endpoint request timed out', 504)),
      ms,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A Lambda context as the runtime passes it, with a deadline at the integration timeout. */
function lambdaContext(functionName: string, timeoutMs = 10_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_AWS_ENV.AWS_REGION}:${ACCOUNT_ID}:function:${functionName}`,
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

/** Like the Lambda runtime, which logs an unhandled error before the gateway answers 5xx. */
function logFunctionError(functionName: string, requestId: string | undefined, error: unknown): void {
  console.error(
    JSON.stringify({
      level: 'ERROR',
      message: `Unhandled error in ${functionName}`,
      ...(requestId === undefined ? {} : { requestId }),
      error:
        error instanceof Error
          ? { name: error.name, message: error.message, stack: error.stack }
          : String(error),
    }),
  );
}

/** The address clients use for a listening host: a wildcard host is reached on loopback. */
function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Local clients keep connections alive; waiting for them would make stopping take as long as they like.
  server.closeAllConnections();
  await closed;
}

async function writeAtomically(path: string, content: string): Promise<void> {
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, content);
  await rename(temp, path);
}

/** Removes the stack record unless another process has since recorded itself under the same port. */
async function removeOwnRecord(path: string): Promise<void> {
  try {
    const record = JSON.parse(await readFile(path, 'utf8')) as RunningStack;
    if (record.pid === process.pid) await rm(path, { force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Makes sure the DynamoDB Local this process started at `endpoint` does not outlive it, even if
 * this process is killed outright; call `dismiss` once it has been stopped. `pid` is Java's.
 */
export function guardDynamoDbLocal(endpoint: string): { readonly pid: number | undefined; dismiss(): void } {
  const pid = findDynamoDbLocalPid(endpoint);
  const watchdog = pid === undefined ? undefined : startOrphanWatchdog(pid);
  return { pid, dismiss: () => watchdog?.kill() };
}

/**
 * The PID of the DynamoDB Local child listening at `endpoint`. `startDynamoDbLocal` keeps its
 * ChildProcess to itself, so it is found among this process's children by its command line.
 */
function findDynamoDbLocalPid(endpoint: string): number | undefined {
  const port = new URL(endpoint).port;
  const isOurs = (ppid: number, args: string) =>
    ppid === process.pid && args.includes('DynamoDBLocal') && args.includes(`-port ${port}`);
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
        if (isOurs(ppid, args)) return Number(entry);
      } catch {
        // The process ended while the list was read.
      }
    }
    return undefined;
  } catch {
    // No /proc (macOS): ask ps.
  }
  try {
    for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' }).split(
      '\n',
    )) {
      const [, pid, ppid, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
      if (pid && ppid && args && isOurs(Number(ppid), args)) return Number(pid);
    }
  } catch {
    // Without ps the watchdog cannot be set up; a clean stop still ends DynamoDB Local.
  }
  return undefined;
}

/**
 * Java does not die with its parent: if this process is killed outright (SIGKILL, a crash that
 * skips the exit handlers), DynamoDB Local would keep running and keep its port. A tiny watchdog
 * process holds a pipe from this one; when the pipe closes, for whatever reason, it ends Java.
 */
function startOrphanWatchdog(javaPid: number): ChildProcess {
  const script = `
    const pid = Number(process.argv[1]);
    // Ctrl+C reaches the whole process group; the parent's own shutdown ends Java then.
    process.on('SIGINT', () => {});
    process.stdin.on('data', () => {});
    process.stdin.on('close', () => {
      try { process.kill(pid, 'SIGTERM'); } catch {}
      setTimeout(() => { try { process.kill(pid, 'SIGKILL'); } catch {} process.exit(0); }, 5000).unref();
    });`;
  const watchdog = spawn(process.execPath, ['-e', script, String(javaPid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Neither the watchdog nor its pipe may keep this process alive.
  watchdog.unref();
  if (watchdog.stdin instanceof Socket) watchdog.stdin.unref();
  return watchdog;
}
