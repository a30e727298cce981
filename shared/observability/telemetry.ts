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
  /** Created by the first metric the request adds: most add none. */
  metrics?: Metrics;
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
 * `CloudWatchMetrics` directives of EMF documents, as JSON text. A directive depends only on which
 * metrics a line carries, a handful of combinations per function, so each is serialised once,
 * under a key that names the combination.
 */
const directives = new Map<string, string>();

function directive(key: string, metrics: Metrics): string {
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
  let key = '';
  // CloudWatch metric names cannot hold a line break, so the key is unambiguous.
  for (const [name, { unit }] of metrics) key += `\n${name}\n${unit}`;
  sink(`${json.slice(0, -1)},"_aws":{"Timestamp":${now},"CloudWatchMetrics":${directive(key, metrics)}}}\n`);
}

/** Writes a log line with no metrics. */
export function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  writeRecord(level, message, fields);
}

/** Adds to a metric of the request in flight; a no-op outside one (scripts, domain tests). */
export function addMetric(name: string, value: number, unit: MetricUnit = 'Count'): void {
  const scope = current.getStore();
  if (!scope) return;
  scope.metrics ??= new Map();
  scope.metrics.set(name, { value: (scope.metrics.get(name)?.value ?? 0) + value, unit });
}

/** Names the outcome of the request in flight: a problem type slug, or a success kind. */
export function setOutcome(outcome: string): void {
  const scope = current.getStore();
  if (scope) scope.outcome = outcome;
}

/** The request line's fixed start: `"service"` and, when deployed, `"stage"`. */
const SERVICE_JSON = `"service":${JSON.stringify(SERVICE)}${stage ? `,"stage":${JSON.stringify(stage)}` : ''}`;

/** Strings JSON.stringify would leave as they are: no quote, backslash, control or lone surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON must escape.
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * The JSON text of a string. Request ids, routes and subjects are plain text nearly always, and
 * quoting them costs a fraction of a JSON.stringify call, which is a few hundred nanoseconds here.
 */
export function jsonString(text: string): string {
  return PLAIN_STRING.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** What names a request on its line: the operation, API Gateway's request id, the caller if any. */
export interface RequestLabels {
  readonly route: string;
  readonly requestId: string;
  readonly sub?: string | undefined;
}

/**
 * Runs one request in a telemetry scope and writes its line: the API Gateway request id as
 * correlation id, route, caller (`sub`, when authenticated), status, outcome, latency, cold start,
 * the metrics the request added, and the per-route metrics Requests, Latency, ClientErrors,
 * ServerErrors, ColdStarts. Never a token or a body.
 */
export async function withRequestTelemetry<T extends { statusCode: number }>(
  request: RequestLabels,
  run: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const scope: RequestScope = {};
  const wasCold = coldStart;
  coldStart = false;
  const response = await current.run(scope, run);
  const latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
  writeRequestLine(request, response.statusCode, latencyMs, wasCold, scope);
  return response;
}

/**
 * The request line, written as JSON text directly rather than built as an object and serialised:
 * every request pays for it, and all but a few of its values are numbers or fixed names. The
 * strings from outside (request id, sub, outcome) go through {@link jsonString};
 * `telemetry.test.ts` parses lines back.
 */
function writeRequestLine(
  request: RequestLabels,
  status: number,
  latencyMs: number,
  wasCold: boolean,
  scope: RequestScope,
): void {
  const now = Date.now();
  let values = `,"Requests":1,"Latency":${latencyMs}`;
  // Names the combination of metrics the line carries (see `directive`), as the values are added.
  let key = 'request:';
  if (status >= 400 && status < 500) {
    values += ',"ClientErrors":1';
    key += 'C';
  } else if (status >= 500) {
    values += ',"ServerErrors":1';
    key += 'S';
  }
  if (wasCold) {
    values += ',"ColdStarts":1';
    key += 'W';
  }
  if (scope.metrics) {
    for (const [name, { value, unit }] of scope.metrics) {
      values += `,${jsonString(name)}:${value}`;
      key += `\n${name}\n${unit}`;
    }
  }
  const outcome = scope.outcome ?? (status < 400 ? 'ok' : `http-${status}`);
  const emf = directives.get(key) ?? directive(key, requestMetrics(status, wasCold, scope.metrics));
  sink(
    `{"timestamp":"${isoTimestamp(now)}","level":"${status >= 500 ? 'ERROR' : 'INFO'}",${SERVICE_JSON},"message":"request","requestId":${jsonString(request.requestId)},"route":${jsonString(request.route)},${request.sub === undefined ? '' : `"sub":${jsonString(request.sub)},`}"status":${status},"outcome":${jsonString(outcome)},"latencyMs":${latencyMs},"coldStart":${wasCold}${values},"_aws":{"Timestamp":${now},"CloudWatchMetrics":${emf}}}\n`,
  );
}

/** The metrics of a request line, in the order {@link writeRequestLine} writes their values. */
function requestMetrics(status: number, wasCold: boolean, added: Metrics | undefined): Metrics {
  const metrics: Metrics = new Map([
    ['Requests', ONE],
    ['Latency', { value: 0, unit: 'Milliseconds' }],
  ]);
  if (status >= 400 && status < 500) metrics.set('ClientErrors', ONE);
  else if (status >= 500) metrics.set('ServerErrors', ONE);
  if (wasCold) metrics.set('ColdStarts', ONE);
  for (const [name, metric] of added ?? []) metrics.set(name, metric);
  return metrics;
}
