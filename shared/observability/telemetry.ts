import { AsyncLocalStorage } from 'node:async_hooks';
import { isoTimestamp } from '../time.ts';

/**
 * Structured logs and CloudWatch metrics in one JSON line per request. The line is an Embedded
 * Metric Format (EMF) document: CloudWatch extracts the metrics, and every other field stays
 * searchable in Logs Insights. Written straight to stdout, no library: nothing more to load at
 * cold start, a few microseconds per request.
 */

export const METRICS_NAMESPACE = 'WalletCatalog';
const SERVICE = 'wallet-catalog-api';

/** The `route` the authorizer's lines carry (it serves every route). */
export const AUTHORIZER_ROUTE = 'authorizer';

// Stages may share an account and region: their metrics must not mix. Unset locally.
const stage = process.env.STAGE;
const DIMENSIONS = stage
  ? [
      ['stage', 'route'],
      ['stage', 'route', 'outcome'],
    ]
  : [['route'], ['route', 'outcome']];

export type Level = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
const LEVELS: Record<Level, number> = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40 };

// Lambda sets AWS_LAMBDA_LOG_LEVEL from the function's application log level (advanced logging controls).
const threshold =
  LEVELS[(process.env.AWS_LAMBDA_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'INFO').toUpperCase() as Level] ??
  LEVELS.INFO;

/** A metric unit CloudWatch knows. */
export type MetricUnit = 'Count' | 'Milliseconds' | 'None';
type Metric = { readonly value: number; readonly unit: MetricUnit };
type Metrics = Map<string, Metric>;

const ONE: Metric = { value: 1, unit: 'Count' };

interface RequestScope {
  outcome?: string;
  readonly metrics: Metrics;
  readonly fields: Record<string, string | number | boolean>;
}

const current = new AsyncLocalStorage<RequestScope>();

// Raw stdout, not `console`: Lambda's JSON log format would wrap console output into a `message`
// string, and CloudWatch would no longer see the EMF document. TELEMETRY_OUTPUT=console routes the
// lines through `console` (a test runner then shows them for failing tests only); `off` drops them.
const output = process.env.TELEMETRY_OUTPUT ?? 'stdout';
const sink: (line: string) => void =
  output === 'console'
    ? (line) => console.log(line.trimEnd())
    : output === 'off'
      ? () => undefined
      : (line) => process.stdout.write(line);
let coldStart = true;

/**
 * The `CloudWatchMetrics` directive of an EMF document, as JSON text. It depends only on which
 * metrics a line carries, a handful of combinations per function, so each is serialised once.
 */
const directives = new Map<string, string>();

function metricDirective(metrics: Metrics): string {
  let key = '';
  // CloudWatch metric names cannot hold a line break, so the key is unambiguous.
  for (const [name, { unit }] of metrics) key += `${name}\n${unit}\n`;
  let text = directives.get(key);
  if (text === undefined) {
    const definitions = Array.from(metrics, ([name, { unit }]) => ({ Name: name, Unit: unit }));
    text = JSON.stringify([{ Namespace: METRICS_NAMESPACE, Dimensions: DIMENSIONS, Metrics: definitions }]);
    directives.set(key, text);
  }
  return text;
}

/**
 * Writes one JSON line. With metrics it is an EMF document and is always written (dropping it
 * would drop the metrics); without, only when `level` passes the configured log level.
 */
export function writeRecord(
  level: Level,
  message: string,
  fields: Record<string, unknown>,
  metrics?: Metrics,
): void {
  if (!metrics?.size && LEVELS[level] < threshold) return;
  const now = Date.now();
  const record: Record<string, unknown> = {
    timestamp: isoTimestamp(now),
    level,
    service: SERVICE,
    ...(stage ? { stage } : {}),
    message,
    ...fields,
  };
  if (!metrics?.size) {
    sink(`${JSON.stringify(record)}\n`);
    return;
  }
  for (const [name, { value }] of metrics) record[name] = value;
  // `_aws` closes the object, so the cached directive text is spliced in rather than serialised again.
  const json = JSON.stringify(record);
  sink(`${json.slice(0, -1)},"_aws":{"Timestamp":${now},"CloudWatchMetrics":${metricDirective(metrics)}}}\n`);
}

/** Writes a log line with no metrics. */
export function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  writeRecord(level, message, fields);
}

/** Adds to a metric of the request in flight; a no-op outside one (scripts, domain tests). */
export function addMetric(name: string, value: number, unit: MetricUnit = 'Count'): void {
  const metrics = current.getStore()?.metrics;
  if (metrics) metrics.set(name, { value: (metrics.get(name)?.value ?? 0) + value, unit });
}

/** Names the outcome of the request in flight: a problem type slug, or a success kind. */
export function setOutcome(outcome: string): void {
  const scope = current.getStore();
  if (scope) scope.outcome = outcome;
}

/** Adds a searchable field to the request's line. Never a token, a body or a secret. */
export function addLogField(name: string, value: string | number | boolean): void {
  const scope = current.getStore();
  if (scope) scope.fields[name] = value;
}

/**
 * Runs one request in a telemetry scope and writes its line: the API Gateway request id as
 * correlation id, route, status, outcome, latency, cold start, the fields and metrics the request
 * added, and the per-route metrics Requests, Latency, ClientErrors, ServerErrors, ColdStarts.
 */
export async function withRequestTelemetry<T extends { statusCode: number }>(
  route: string,
  requestId: string,
  run: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const scope: RequestScope = { metrics: new Map(), fields: {} };
  const wasCold = coldStart;
  coldStart = false;
  const response = await current.run(scope, run);
  const latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
  const status = response.statusCode;
  const metrics: Metrics = new Map();
  metrics.set('Requests', ONE);
  metrics.set('Latency', { value: latencyMs, unit: 'Milliseconds' });
  if (status >= 400 && status < 500) metrics.set('ClientErrors', ONE);
  if (status >= 500) metrics.set('ServerErrors', ONE);
  if (wasCold) metrics.set('ColdStarts', ONE);
  for (const [name, metric] of scope.metrics) metrics.set(name, metric);
  writeRecord(
    status >= 500 ? 'ERROR' : 'INFO',
    'request',
    {
      requestId,
      route,
      status,
      outcome: scope.outcome ?? (status < 400 ? 'ok' : `http-${status}`),
      latencyMs,
      coldStart: wasCold,
      ...scope.fields,
    },
    metrics,
  );
  return response;
}
