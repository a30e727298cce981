import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';

/**
 * Logs and metrics through Powertools for AWS Lambda (docs/decisions/logging-and-metrics.md):
 * Logger writes JSON lines with its standard keys, at the level Lambda's advanced logging controls
 * (`AWS_LAMBDA_LOG_LEVEL`) or `POWERTOOLS_LOG_LEVEL` set; Metrics writes the Embedded Metric Format
 * (EMF) lines the alarms and the dashboard read.
 */

export const METRICS_NAMESPACE = 'WalletCatalog';
/** Powertools' `service`: a key of every log line and a dimension of every metric. */
export const SERVICE = 'wallet-catalog-api';

/** The `route` the authorizer's lines carry (it serves every route). */
export const AUTHORIZER_ROUTE = 'authorizer';

// Stages may share an account and region: their metrics must not mix. Unset locally.
const stage = process.env.STAGE;

export const logger = new Logger({ serviceName: SERVICE, persistentKeys: stage ? { stage } : {} });

/** A metric unit CloudWatch knows. */
export type MetricUnit = 'Count' | 'Milliseconds' | 'None';

/**
 * The metrics of one function: each in the dimension set service × stage × route, which the
 * alarms and the dashboard name (infra/constructs/service-monitoring.ts).
 */
export function routeMetrics(route: string): Metrics {
  return new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: SERVICE,
    defaultDimensions: stage ? { stage, route } : { route },
  });
}

/** A metric's value: its name, the number, its unit (a count unless named). */
export type MetricValue = readonly [name: string, value: number, unit?: MetricUnit];

/** Writes `values` as one EMF line of `metrics`. */
export function publish(metrics: Metrics, values: Iterable<MetricValue>): void {
  for (const [name, value, unit = 'Count'] of values) metrics.addMetric(name, unit, value);
  metrics.publishStoredMetrics();
}

/**
 * What a request adds while it runs. Kept in its own async scope, not in Powertools' store, which
 * is shared by the requests a process serves at once (the local gateway, tests); published in one
 * synchronous step when the request ends.
 */
interface RequestScope {
  outcome?: string;
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
 * The request telemetry of one route's function. Each request writes its log line (the API Gateway
 * request id as `correlation_id`, route, caller `sub` when authenticated, status, outcome, latency;
 * never a token or a body) and one EMF line: Requests, Latency, ClientErrors or ServerErrors, and
 * and the metrics the request added; the first request of an on-demand execution environment also
 * writes Powertools' ColdStart metric.
 */
export function requestTelemetry(route: string) {
  const metrics = routeMetrics(route);
  return async <T extends { statusCode: number }>(
    request: RequestLabels,
    context: Context | undefined,
    run: () => Promise<T>,
  ): Promise<T> => {
    const started = performance.now();
    if (context) logger.addContext(context);
    metrics.captureColdStartMetric();
    const scope: RequestScope = { metrics: new Map() };
    const response = await current.run(scope, run);
    const latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
    const status = response.statusCode;
    logger[status >= 500 ? 'error' : 'info']('request', {
      correlation_id: request.requestId,
      route,
      sub: request.sub,
      status,
      outcome: scope.outcome ?? (status < 400 ? 'ok' : `http-${status}`),
      latencyMs,
    });
    const values: MetricValue[] = [
      ['Requests', 1],
      ['Latency', latencyMs, 'Milliseconds'],
    ];
    if (status >= 500) values.push(['ServerErrors', 1]);
    else if (status >= 400) values.push(['ClientErrors', 1]);
    for (const [name, { value, unit }] of scope.metrics) values.push([name, value, unit]);
    publish(metrics, values);
    return response;
  };
}
