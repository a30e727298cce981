/**
 * The local gateway: an HTTP server that stands in for the deployed API Gateway REST API and
 * runs the very modules Lambda runs (the TOKEN authorizer and each route's handler), with real
 * DynamoDB (Local) behind them. Two ways to run the functions, behind one {@link Invoker}: in this
 * process from the TypeScript sources (the default, for fast edit-run cycles: every function
 * shares this process and its `process.env`), or bundled (`bundled`, `invoke/bundled-functions.ts`),
 * each from its bundle in the synthesized `cdk.out` in execution environments of its own, with its
 * template's environment (table names and issuer taken from the local stack) plus what only a local
 * run needs: the DynamoDB endpoint, local credentials and, for routes, the gateway's CORS origins
 * (`invoke/local-resources.ts`). This module composes the parts and owns the stack's lifecycle:
 * the request pipeline (`request-pipeline.ts`: the per-caller rate limit, routing, the body limit
 * `MAX_BODY_BYTES`, the proxy event, invocation), the authorizer and its cache
 * (`authorizer-emulation.ts`), the rate limiter (`caller-rate-limit.ts`), the in-process invoker
 * (`invoke.ts`), DynamoDB Local, its proxy and the local S3 (`backing-services.ts`), the issuer's
 * JWKS (`jwks-server.ts`), and the wallets table's stream into the credit poster, as the deployed
 * event source mapping delivers it (`stream-poller.ts`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CREDIT_POSTER_FUNCTION_DIR, CREDIT_POSTER_NAME } from '#infra/credit-poster-settings.ts';
import {
  authorizerEnvironment,
  type CallerRateLimit,
  defaultCallerRateLimit,
  defaultServiceSettings,
  functionEnvironment,
  walletEnvironment,
} from '#infra/environment.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { BINARY_MEDIA_TYPES } from '#shared/http/binary-media.ts';
import { type Route, routes, type TableName } from '#shared/routes.ts';
import { buckets, S3_ENDPOINT_ENV } from '#shared/s3/buckets.ts';
import type { AccessLogEntry } from './access-log.ts';
import { AuthorizerEmulation, type AuthorizerHandler } from './authorizer-emulation.ts';
import { type BackingServicesOptions, startBackingServices } from './backing-services.ts';
import { CallerRateLimiter } from './caller-rate-limit.ts';
import { LOCAL_DEPLOYMENT } from './deployment.ts';
import { LOCAL_AWS_ENV } from './dynamodb-local.ts';
import type { DynamoDbProxy } from './dynamodb-proxy.ts';
import { callerEndpoint } from './dynamodb-share.ts';
import { logFunctionError } from './gateway-answer.ts';
import {
  answerClientErrors,
  closeServer,
  connectHost,
  listen,
  refuseWithoutHost,
  SERVER_OPTIONS,
} from './http-server.ts';
import {
  type BundledOptions,
  coldStartScope,
  type FunctionStats,
  loadBundledFunctions,
} from './invoke/bundled-functions.ts';
import { InProcessInvoker, type Invoker, loadHandler, withOwnEnvironment } from './invoke.ts';
import { defaultPort, JWKS_PATH, LOCAL_AUDIENCE, loadOrCreateLocalKeys, localIssuerUrl } from './issuer.ts';
import { jwksAnswer } from './jwks-server.ts';
import { RequestPipeline } from './request-pipeline.ts';
import { loadSweep, startScheduledSweep } from './scheduled-sweep.ts';
import { type RunningStack, stackRecordPath, writeStackRecord } from './stack-record.ts';
import { localStateDir } from './state.ts';
import {
  type StreamInvoke,
  type StreamPoller,
  type StreamPollerStats,
  startStreamPoller,
} from './stream-poller.ts';
import { localWebhookEnvironment } from './webhook-secrets-key.ts';
import { startLocalWebhookWorkers, type WebhookWorkers } from './webhook-workers.ts';

/** The gateway's options, and those of the services behind it ({@link BackingServicesOptions}). */
export interface LocalStackOptions extends BackingServicesOptions {
  /** TCP port of the gateway; 0 for any free one. {@link defaultPort} when absent. */
  readonly port?: number;
  /** Interface to listen on; 127.0.0.1 keeps the API off the network. */
  readonly host?: string;
  /** Issuer keys and the `stack-<port>.json` record live here; {@link localStateDir} when absent. */
  readonly stateDir?: string;
  /** How long an authorizer answer is reused for the same token, as API Gateway caches it; 0 turns caching off. */
  readonly authorizerCacheTtlSeconds?: number;
  /**
   * The per-caller rate limit of the deployed WAF rule, mirrored; {@link defaultCallerRateLimit}
   * when absent, `null` for none (e.g. for benchmarks).
   */
  readonly callerRateLimit?: CallerRateLimit | null;
  /** Origins a browser app may call from (CORS, as a stage's `api:corsAllowedOrigins`); none by default. */
  readonly corsAllowedOrigins?: readonly string[];
  /** API Gateway's integration timeout: a handler slower than this gets the client a 504. */
  readonly integrationTimeoutMs?: number;
  /** Media types passed base64-encoded (the API's `binaryMediaTypes`); the deployed API's when absent. */
  readonly binaryMediaTypes?: readonly string[];
  /** Called once per answered request, e.g. to print an access log. */
  readonly onRequest?: (entry: AccessLogEntry) => void;
  /**
   * Runs each function from its bundle in the synthesized `cdk.out`, in execution environments of
   * its own, instead of importing the sources into this process (the default).
   */
  readonly bundled?: BundledOptions;
  /** Where the credit poster's stream poller says what it is doing; stderr when absent. */
  readonly onStreamLog?: (line: string) => void;
}

export interface LocalStack {
  readonly baseUrl: string;
  readonly port: number;
  /** The DynamoDB the functions use: the conflict proxy unless `conflicts: false`, else DynamoDB Local. */
  readonly dynamodbEndpoint: string;
  /** DynamoDB Local itself, past the proxy. */
  readonly dynamodbLocalEndpoint: string;
  /** The local S3 (s3rver) the image functions use. */
  readonly s3Endpoint: string;
  /** The conflict proxy, with its touch counts; absent with `conflicts: false`. */
  readonly dynamodbProxy?: DynamoDbProxy;
  /** PID of the DynamoDB Local (Java) process this stack started; absent when it uses another. */
  readonly dynamodbPid?: number;
  /**
   * What the local stack supplies: every function's variables together, as set on `process.env`
   * in-process. Bundled, each function gets its template's, resolved from these
   * (`invoke/local-resources.ts`).
   */
  readonly env: Readonly<Record<string, string>>;
  readonly mode: 'in-process' | 'bundled';
  /** Bundled: where the template came from (stack, cdk.out, synthesized now or not). */
  readonly functionsSource: string;
  /** Functions that cannot run, by name; their routes answer 5xx as a function failing its init would. */
  readonly loadErrors: Readonly<Record<string, string>>;
  /** Bundled: invocations, cold starts and live environments per function; empty in-process. */
  functionStats(): Record<string, FunctionStats>;
  /**
   * The credit poster as the deployed stack runs it: the wallets table's stream polled into the
   * function (its bundle, or its module in-process); absent when the function cannot run.
   */
  readonly creditPoster?: {
    /** The on-failure destination: one JSON line per batch the poller gave up on. */
    readonly failureFile: string;
    stats(): StreamPollerStats;
  };
  /** The webhook events' deriver and dispatcher (infra/local/webhook-workers.ts). */
  readonly webhookWorkers: WebhookWorkers;
  /**
   * Stops the server, then the rest in reverse order of start, so nothing outlives what it uses:
   * the stack record, the stream poller, the bundled functions, the proxy, and DynamoDB Local last
   * (if this stack started it).
   */
  stop(): Promise<void>;
}

// Handler modules read their environment once, at load, and ES modules cannot be unloaded: a
// second in-process stack in the same process would silently run with the first one's tables and
// issuer. Bundled stacks load nothing here and may be many.
let inProcessStackStarted = false;

/**
 * Starts the local stack: the gateway on `host:port` (listening first, so that port 0 yields the
 * port the issuer is named after), DynamoDB Local with the tables behind the conflict proxy, the
 * issuer's keys, then the functions. In-process, the function environment goes onto `process.env`
 * before the authorizer and handler modules are imported, since they read it at load; so at most
 * one in-process stack per process (bundled stacks touch neither and may be many).
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const bundled = options.bundled !== undefined;
  if (inProcessStackStarted && !bundled)
    throw new Error('A local stack was already started in this process; start another process');
  const stateDir = options.stateDir ?? localStateDir();
  const host = options.host ?? '127.0.0.1';
  const settings = { ...defaultServiceSettings, corsAllowedOrigins: options.corsAllowedOrigins ?? [] };
  const authorizer = new AuthorizerEmulation(options.authorizerCacheTtlSeconds ?? 300);
  const pipeline = new RequestPipeline({
    authorizer,
    integrationTimeoutMs: options.integrationTimeoutMs ?? 29_000,
    binaryMediaTypes: options.binaryMediaTypes ?? BINARY_MEDIA_TYPES,
    callerRateLimiter:
      options.callerRateLimit === null
        ? undefined
        : new CallerRateLimiter(options.callerRateLimit ?? defaultCallerRateLimit),
    onRequest: withColdStarts(options.onRequest),
    corsAllowedOrigins: settings.corsAllowedOrigins,
  });
  const server = createServer(SERVER_OPTIONS, (req, res) => {
    if (refuseWithoutHost(req, res)) return;
    // Each request collects the functions it started an environment for (bundled), for its log line.
    coldStartScope.run([], () =>
      pipeline.serve(req, res).catch((error: unknown) => {
        logFunctionError('gateway', undefined, error);
        res.destroy();
      }),
    );
  });
  answerClientErrors(server);
  await listen(server, options.port ?? defaultPort(), host);
  if (!bundled) inProcessStackStarted = true;
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
    const {
      dynamodbEndpoint,
      dynamodbLocalEndpoint,
      dynamodbPid,
      dynamodbProxy,
      s3Endpoint,
      bucketEnv,
      tableEnv,
    } = await startBackingServices(options, cleanups, () => stopping !== undefined);
    const keys = await loadOrCreateLocalKeys(stateDir);
    pipeline.jwks = jwksAnswer(keys.publicJwks);

    const tableNames = Object.fromEntries(
      Object.entries(tables).map(([name, definition]) => [name, tableEnv[definition.envVar]]),
    ) as Record<TableName, string>;
    // What every function gets, as the templates and Lambda give it (the stage, so that local log
    // lines and metrics carry one too), and what only some get.
    const common = { ...LOCAL_AWS_ENV, DYNAMODB_ENDPOINT: dynamodbEndpoint, STAGE: LOCAL_DEPLOYMENT.stage };
    // The functions on the webhooks table: the local key in place of KMS, http to loopback allowed.
    const webhookEnv = await localWebhookEnvironment(stateDir);
    const environmentOf = (route: Route) => ({
      ...common,
      ...functionEnvironment(route, settings, tableNames, {
        images: bucketEnv[buckets.images.envVar] as string,
      }),
      ...(route.images ? { [S3_ENDPOINT_ENV]: s3Endpoint } : {}),
      ...(route.data?.table === 'webhooks' ? webhookEnv : {}),
    });
    // Each function its own endpoint at the proxy, which shares DynamoDB Local among them.
    const ownEndpoint = (id: string): Record<string, string> =>
      dynamodbProxy === undefined ? {} : { DYNAMODB_ENDPOINT: callerEndpoint(dynamodbProxy.endpoint, id) };
    const authorizerEnv = {
      ...common,
      ...authorizerEnvironment({
        issuer: localIssuerUrl(port),
        audience: LOCAL_AUDIENCE,
        jwksUrl: `${baseUrl}${JWKS_PATH}`,
        // The local issuer signs ECDSA in the low-S form only, so the twin of a token is refused.
        requireLowS: true,
      }),
    };
    const env: Record<string, string> = Object.assign(
      { ...tableEnv },
      ...routes.map(environmentOf),
      authorizerEnv,
    );

    let invoker: Invoker;
    let loadErrors: Record<string, string>;
    let posterInvoke: StreamInvoke | undefined;
    let functionsSource = 'the TypeScript sources, in this process';
    let functionStats = (): Record<string, FunctionStats> => ({});
    if (options.bundled) {
      const functions = await loadBundledFunctions(options.bundled, routes, (id) => ({
        ...env,
        ...ownEndpoint(id),
      }));
      cleanups.push(() => functions.close());
      authorizer.handler = functions.authorizer();
      ({ loadErrors, source: functionsSource } = functions);
      functionStats = () => functions.stats();
      posterInvoke = functions.poster();
      invoker = functions;
    } else {
      // One process.env for every function at request time: each sees the others' variables
      // (bundled mode does not), though each module was imported seeing only its own.
      Object.assign(process.env, env);
      // Modules read their environment at load: imported only now. One that fails is reported, not fatal.
      const inProcess = new InProcessInvoker();
      try {
        authorizer.handler = (await withOwnEnvironment(authorizerEnv, env, () =>
          loadHandler('authorizer'),
        )) as AuthorizerHandler;
      } catch (error) {
        inProcess.loadErrors.authorizer = error instanceof Error ? error.message : String(error);
      }
      await inProcess.load(
        routes,
        (route) => ({ ...environmentOf(route), ...ownEndpoint(route.operationId) }),
        env,
      );
      loadErrors = inProcess.loadErrors;
      try {
        const posterEnv = {
          ...common,
          ...ownEndpoint(CREDIT_POSTER_NAME),
          [tables.wallets.envVar]: tableNames.wallets,
        };
        posterInvoke = (await withOwnEnvironment(posterEnv, env, () =>
          loadHandler(CREDIT_POSTER_FUNCTION_DIR),
        )) as StreamInvoke;
      } catch (error) {
        loadErrors[CREDIT_POSTER_NAME] = error instanceof Error ? error.message : String(error);
      }
      invoker = inProcess;
    }
    pipeline.setInvoker(invoker);

    // The sweep of batches posted and not completed, on its schedule: the sources, in this process.
    try {
      const own = { ...common, ...ownEndpoint('sweep-batches'), [tables.wallets.envVar]: tableNames.wallets };
      const sweep = startScheduledSweep(await loadSweep(own, env), { log: options.onStreamLog });
      cleanups.push(() => sweep.stop());
    } catch (error) {
      loadErrors['sweep-batches'] = error instanceof Error ? error.message : String(error);
    }

    // After the functions, so it stops before them: its last batch still has a function to run.
    let poller: StreamPoller | undefined;
    const failureFile = join(stateDir, `credit-poster-failures-${port}.jsonl`);
    if (posterInvoke) {
      poller = await startStreamPoller({
        // DynamoDB Local itself: Lambda reads a stream from DynamoDB Streams, where no transaction
        // conflicts; the poster's own writes go through the conflict proxy with the functions'.
        endpoint: dynamodbLocalEndpoint,
        tableName: tableNames.wallets,
        invoke: posterInvoke,
        failureFile,
        ...(options.onStreamLog === undefined ? {} : { log: options.onStreamLog }),
      });
      const started = poller;
      cleanups.push(() => started.stop());
    }
    const webhookWorkers = await startLocalWebhookWorkers({
      stateDir,
      port,
      streamEndpoint: dynamodbLocalEndpoint,
      tableNames,
      allEnv: env,
      common: { ...common, ...webhookEnv },
      walletEnv: walletEnvironment(settings),
      ownEndpoint,
      ...(options.onStreamLog === undefined ? {} : { log: options.onStreamLog }),
    });
    cleanups.push(() => webhookWorkers.stop());

    const record: RunningStack = {
      baseUrl,
      pid: process.pid,
      dynamodbEndpoint,
      dynamodbLocalEndpoint,
      s3Endpoint,
      conflicts: dynamodbProxy !== undefined,
      ...(dynamodbPid === undefined ? {} : { dynamodbPid }),
      env,
    };
    cleanups.push(await writeStackRecord(stackRecordPath(stateDir, port), record));

    return {
      baseUrl,
      port,
      dynamodbEndpoint,
      dynamodbLocalEndpoint,
      s3Endpoint,
      ...(dynamodbProxy === undefined ? {} : { dynamodbProxy }),
      ...(dynamodbPid === undefined ? {} : { dynamodbPid }),
      env,
      mode: bundled ? 'bundled' : 'in-process',
      functionsSource,
      loadErrors,
      functionStats,
      ...(poller === undefined
        ? {}
        : { creditPoster: { failureFile, stats: (poller as StreamPoller).stats } }),
      webhookWorkers,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Adds the functions a request started an environment for (its cold starts) to its log entry. */
function withColdStarts(
  onRequest: ((entry: AccessLogEntry) => void) | undefined,
): ((entry: AccessLogEntry) => void) | undefined {
  if (onRequest === undefined) return undefined;
  return (entry) => {
    const coldStarts = coldStartScope.getStore();
    onRequest(coldStarts?.length ? { ...entry, coldStarts: [...coldStarts] } : entry);
  };
}
