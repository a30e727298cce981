import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';

/**
 * Logs and metrics as JSON lines on stdout (docs/decisions/logging-and-metrics.md): log lines with
 * the keys Powertools for AWS Lambda writes, at the level Lambda's advanced logging controls
 * (`AWS_LAMBDA_LOG_LEVEL`) or `LOG_LEVEL` set, and the Embedded Metric Format (EMF) lines the
 * alarms and the dashboard read. Written by `JSON.stringify` and one `write` per line. A request's
 * log line carries its metrics too: one line, one write, one ingestion per request.
 */

export const METRICS_NAMESPACE = 'WalletCatalog';
/** The `service` key of every log line, and a dimension of every metric. */
export const SERVICE = 'wallet-catalog-api';

/** The `route` the authorizer's lines carry (it serves every route). */
export const AUTHORIZER_ROUTE = 'authorizer';

// Read once, at cold start. Stages may share an account and region: their metrics must not mix
// (unset locally).
const stage = process.env.STAGE;
const LEVELS = { DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 } as const;
type Level = Exclude<keyof typeof LEVELS, 'SILENT'>;
const threshold =
  LEVELS[
    (process.env.AWS_LAMBDA_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'INFO').toUpperCase() as keyof typeof LEVELS
  ] ?? LEVELS.INFO;
const metricsDisabled = process.env.METRICS_DISABLED === 'true';

const writeLine = (line: object) => void process.stdout.write(`${JSON.stringify(line)}\n`);

/**
 * The invocation a log line belongs to, as Lambda's context names it: a request's own, in its
 * async scope (below), else the last `addContext`'s. Not one value for the process: `npm start`
 * runs every function in one process, where the authorizer's and the dispatcher's lines carried
 * whichever request had run last.
 */
let invocation: Record<string, unknown> = {};
let invocations = 0;

/** The invocation keys of `context` (`cold_start` true only on the process's first). */
function invocationKeys(context: Context): Record<string, unknown> {
  return {
    cold_start: invocations++ === 0,
    function_arn: context.invokedFunctionArn,
    function_memory_size: Number(context.memoryLimitInMB),
    function_name: context.functionName,
    function_request_id: context.awsRequestId,
  };
}

/** Log lines in Powertools' shape: `level`, `message`, `timestamp`, `service`, the invocation's keys, then the fields. */
export const logger = {
  /** Sets the invocation keys of the lines that follow, outside a request's scope. */
  addContext(context: Context): void {
    invocation = invocationKeys(context);
  },
  debug: (message: string, fields?: object) => log('DEBUG', message, fields),
  info: (message: string, fields?: object) => log('INFO', message, fields),
  warn: (message: string, fields?: object) => log('WARN', message, fields),
  error: (message: string, fields?: object) => log('ERROR', message, fields),
};

/** Writes a log line at `level` unless the threshold drops it; whether it was written. */
function log(
  level: Level,
  message: string,
  fields?: object,
  keys: Record<string, unknown> = current.getStore()?.invocation ?? invocation,
): boolean {
  if (LEVELS[level] < threshold) return false;
  // Lambda sets the trace header per invocation, in the environment.
  const trace = process.env._X_AMZN_TRACE_ID;
  writeLine({
    level,
    message,
    timestamp: new Date().toISOString(),
    service: SERVICE,
    ...(stage ? { stage } : {}),
    ...keys,
    ...(trace ? { xray_trace_id: trace.split(';')[0]?.replace('Root=', '') } : {}),
    ...fields,
  });
  return true;
}

/** A metric unit CloudWatch knows. */
export type MetricUnit = 'Count' | 'Milliseconds' | 'None';

/** A metric's value: its name, the number, its unit (a count unless named). */
export type MetricValue = readonly [name: string, value: number, unit?: MetricUnit];

/**
 * Where one function's metrics go: the dimension set service × stage × route, which the alarms and
 * the dashboard name (infra/constructs/service-monitoring.ts).
 */
export interface RouteMetrics {
  readonly dimensions: Readonly<Record<string, string>>;
}

export function routeMetrics(route: string): RouteMetrics {
  return { dimensions: stage ? { service: SERVICE, stage, route } : { service: SERVICE, route } };
}

/** Writes `values` as one EMF line of `metrics`. */
export function publish(metrics: RouteMetrics, values: Iterable<MetricValue>): void {
  const fields = metricFields(metrics, values);
  if (fields) writeLine(fields);
}

/**
 * The EMF fields of `values` in `metrics`, which make any JSON line a metrics line too (CloudWatch
 * reads the `_aws` directive and the top-level values it names); none with metrics disabled.
 */
function metricFields(metrics: RouteMetrics, values: Iterable<MetricValue>): object | undefined {
  if (metricsDisabled) return undefined;
  const definitions: { Name: string; Unit: MetricUnit }[] = [];
  const line: Record<string, unknown> = { ...metrics.dimensions };
  for (const [name, value, unit = 'Count'] of values) {
    definitions.push({ Name: name, Unit: unit });
    line[name] = value;
  }
  return {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        { Namespace: METRICS_NAMESPACE, Dimensions: [Object.keys(metrics.dimensions)], Metrics: definitions },
      ],
    },
    ...line,
  };
}

/**
 * What a request adds while it runs, kept in its own async scope: the local gateway and the tests
 * serve several requests of one process at once. Published in one synchronous step when the
 * request ends.
 */
interface RequestScope {
  outcome?: string;
  readonly invocation?: Record<string, unknown>;
  readonly metrics: Map<string, { value: number; unit: MetricUnit }>;
}

const current = new AsyncLocalStorage<RequestScope>();

/** Adds to a metric of the request in flight; a no-op outside one (scripts, domain tests). */
export function addMetric(name: string, value: number, unit: MetricUnit = 'Count'): void {
  const metrics = current.getStore()?.metrics;
  metrics?.set(name, { value: (metrics.get(name)?.value ?? 0) + value, unit });
}

/** Names the outcome of the request in flight: a problem type slug, or a success kind. */
export function setOutcome(outcome: string): void {
  const scope = current.getStore();
  if (scope) scope.outcome = outcome;
}

/** What names a request on its line: API Gateway's request id, the caller if any. */
export interface RequestLabels {
  readonly requestId: string;
  readonly sub?: string | undefined;
}

/**
 * The request telemetry of one route's function. Each request writes one line: its log line (the
 * API Gateway request id as `correlation_id`, route, caller `sub` when authenticated, status,
 * outcome, latency; never a token or a body) carrying its metrics in EMF: Requests, Latency,
 * ClientErrors or ServerErrors, and the metrics the request added; the first request of an
 * on-demand execution environment also counts `ColdStart` (provisioned concurrency and SnapStart
 * environments are not cold when called). A level that drops the log line leaves the metrics alone
 * on theirs. The line's `service` and `route` are the metrics' dimensions too.
 */
export function requestTelemetry(route: string) {
  const metrics = routeMetrics(route);
  let coldStart = process.env.AWS_LAMBDA_INITIALIZATION_TYPE === 'on-demand';
  return async <T extends { statusCode: number }>(
    request: RequestLabels,
    context: Context | undefined,
    run: () => Promise<T>,
  ): Promise<T> => {
    const started = performance.now();
    const scope: RequestScope = {
      metrics: new Map(),
      ...(context ? { invocation: invocationKeys(context) } : {}),
    };
    const response = await current.run(scope, run);
    const latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
    const status = response.statusCode;
    const values: MetricValue[] = [
      ['Requests', 1],
      ['Latency', latencyMs, 'Milliseconds'],
    ];
    if (coldStart) values.push(['ColdStart', 1]);
    coldStart = false;
    if (status >= 500) values.push(['ServerErrors', 1]);
    else if (status >= 400) values.push(['ClientErrors', 1]);
    for (const [name, { value, unit }] of scope.metrics) values.push([name, value, unit]);
    const emf = metricFields(metrics, values);
    const logged = log(
      status >= 500 ? 'ERROR' : 'INFO',
      'request',
      {
        correlation_id: request.requestId,
        route,
        sub: request.sub,
        status,
        outcome: scope.outcome ?? (status < 400 ? 'ok' : `http-${status}`),
        latencyMs,
        ...emf,
      },
      scope.invocation,
    );
    if (!logged && emf) writeLine(emf);
    return response;
  };
}
