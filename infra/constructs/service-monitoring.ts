import { Duration } from 'aws-cdk-lib';
import type { Method, RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  type Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { PROBE_ROUTE } from '#functions/probe/probe.ts';
import {
  ALARM_THRESHOLDS,
  API_THROTTLED_METRIC,
  alarmNamePrefix,
  sumOverOperations,
  tableOperations,
} from '#infra/constructs/alarm-thresholds.ts';
import type { CreditPoster } from '#infra/constructs/credit-poster.ts';
import type { ProjectFunction } from '#infra/constructs/project-function.ts';
import { addServiceDashboard } from '#infra/constructs/service-dashboard.ts';
import { AUTHORIZER_ROUTE, METRICS_NAMESPACE, SERVICE } from '#shared/observability/telemetry.ts';
import { type OperationId, type Route, routes, type TableName } from '#shared/routes.ts';

/** Properties of {@link ServiceMonitoring}. */
export interface ServiceMonitoringProps {
  /** The stage: part of every alarm's name and of the dashboard's. */
  readonly stageName: string;
  readonly api: RestApi;
  /** The API's access log group, whose 429 lines become a metric. */
  readonly accessLogs: ILogGroup;
  readonly authorizer: ProjectFunction;
  readonly functions: ReadonlyMap<OperationId, ProjectFunction>;
  readonly methods: ReadonlyMap<OperationId, Method>;
  readonly tables: Readonly<Record<TableName, ITable>>;
  /** Receives every alarm's ALARM and OK transitions. */
  readonly alarmTopic: ITopic;
  /** The credit poster: how far behind the stream it is, and the batches it gave up on. */
  readonly creditPoster: CreditPoster;
  /**
   * The functions no route calls (the poster, the probe, the webhook and audit workers), by their
   * name in alarm names: each gets a throttles alarm and its lines on the dashboard, as the routes'
   * functions do. Their own constructs alarm on what a throttle leads to (lag, silence, a failed run).
   */
  readonly workers: ReadonlyMap<string, ProjectFunction>;
}

/** What contends in each table's transactions: the conflicts alarm's hint (and its runbook row's). */
const CONFLICTING_WRITES: Readonly<Record<TableName, string>> = {
  wallets: 'payments to or from the same wallets; for sendMoney, its log names the address',
  pets: 'writes to the same pet',
  webhooks: "changes to one merchant's endpoints",
};

/** A route's requests: those its function answered, and those it crashed on (EMF never saw them). */
const ALL = '(FILL(requests, 0) + FILL(crashes, 0))';

/** The credit poster's name in alarm names and the dashboard. */
export const CREDIT_POSTER_SUBJECT = 'creditPoster';

/** How one alarm is defined; see {@link ALARM_THRESHOLDS}. */
interface AlarmSpec {
  /** What the alarm watches (`api`, a route, a function, a table); the second part of its name. */
  readonly subject: string;
  /** What goes wrong; the last part of its name. */
  readonly kind: string;
  readonly metric: IMetric;
  readonly threshold: (typeof ALARM_THRESHOLDS)[keyof typeof ALARM_THRESHOLDS];
  /** What the alarm means and where to look first: it is the body of the notification. */
  readonly description: string;
  /** @default at or above the threshold */
  readonly comparison?: ComparisonOperator;
  /** @default not breaching: the metric is only published when something happens */
  readonly treatMissingData?: TreatMissingData;
}

/**
 * The alarms and the dashboard of one stage. Every alarm is named
 * `wallet-catalog-<stage>-<subject>-<kind>` and notifies the alarm topic on ALARM and on OK. The
 * request-driven alarms treat missing data as not breaching: their metrics are only published
 * when something happens (a request, an error, a retry), so no data means nothing went wrong
 * there. Silence of the whole service is caught by the synthetic probe's alarm, which treats
 * missing data as breaching: the probe calls the API every 5 minutes, so no datapoint means it
 * could not run or report.
 */
export class ServiceMonitoring extends Construct {
  /** Every alarm, in the order created. */
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;
  readonly #props: ServiceMonitoringProps;

  constructor(scope: Construct, id: string, props: ServiceMonitoringProps) {
    super(scope, id);
    this.#props = props;
    const stage = props.api.deploymentStage;
    const operationIds = [...props.functions.keys()];

    // API-wide 5xx rate, from API Gateway: includes failures before any function runs.
    const rate = ALARM_THRESHOLDS.serverErrorRatePercent;
    this.#alarm('Api5xxRate', {
      subject: 'api',
      kind: '5xx-rate',
      metric: new MathExpression({
        expression: 'IF(requests > 0, 100 * errors / requests, 0)',
        usingMetrics: {
          errors: stage.metricServerError({ statistic: 'Sum', period: rate.period }),
          requests: stage.metricCount({ statistic: 'Sum', period: rate.period }),
        },
        period: rate.period,
        label: '5XXError % of Count',
      }),
      threshold: rate,
      description:
        '5%+ of API requests answered 5xx in 3 of 5 minutes. Find the route (per-route 5xx alarms, dashboard), then its function log and X-Ray traces; after a deploy, revert the commit.',
    });

    for (const [operationId, fn] of props.functions) {
      this.#alarm(`${operationId}5xxRate`, {
        subject: operationId,
        kind: '5xx-rate',
        metric: new MathExpression({
          // EMF counts the requests that return; a crash, timeout, OOM or init error, Lambda's Errors only.
          expression: `IF(${ALL} > 0, 100 * (FILL(errors, 0) + FILL(crashes, 0)) / ${ALL}, 0)`,
          usingMetrics: {
            errors: this.#emf('ServerErrors', operationId, rate.period),
            requests: this.#emf('Requests', operationId, rate.period),
            crashes: fn.function.metricErrors({ statistic: 'Sum', period: rate.period }),
          },
          period: rate.period,
          label: `${operationId} ServerErrors and Lambda Errors % of requests`,
        }),
        threshold: rate,
        description: `5%+ of ${operationId} requests ended in a 5xx from its function, or in its crash (timeout, out of memory, init error), in 3 of 5 minutes. Logs Insights on its log group: filter status >= 500 | stats count() by outcome; a crash has no such line: "Task timed out", INIT errors, level = "ERROR".`,
      });
    }

    const latency = ALARM_THRESHOLDS.p99LatencyMs;
    for (const operationId of operationIds) {
      this.#alarm(`${operationId}P99Latency`, {
        subject: operationId,
        kind: 'p99-latency',
        metric: this.#method(operationId).metricLatency(stage, { statistic: 'p99', period: latency.period }),
        threshold: latency,
        description: `p99 latency of ${operationId} at 3 s+ for 15 minutes, as clients see it (authorizer included). Compare the function's Duration; look for DynamoDB retries, slow JWKS fetches and cold starts in X-Ray.`,
      });
    }

    const throttles = ALARM_THRESHOLDS.lambdaThrottles;
    const everyFunction: [string, ProjectFunction][] = [
      [AUTHORIZER_ROUTE, props.authorizer],
      ...[...props.functions].map(([operationId, fn]): [string, ProjectFunction] => [operationId, fn]),
      ...props.workers,
    ];
    for (const [name, fn] of everyFunction) {
      this.#alarm(`${name}Throttles`, {
        subject: name,
        kind: 'throttles',
        metric: fn.function.metricThrottles({ statistic: 'Sum', period: throttles.period }),
        threshold: throttles,
        description: `Lambda throttled ${name}: concurrency ran out (account limit, or reserved concurrency). Check ConcurrentExecutions in the account; raise the quota or find what else consumes it.`,
      });
    }

    const throttled = ALARM_THRESHOLDS.apiThrottledRequests;
    const throttledFilter = new MetricFilter(this, 'ApiThrottledFilter', {
      logGroup: props.accessLogs,
      // The access log writes every field as a JSON string.
      filterPattern: FilterPattern.stringValue('$.status', '=', '429'),
      metricNamespace: METRICS_NAMESPACE,
      metricName: API_THROTTLED_METRIC,
      metricValue: '1',
      dimensions: { stage: '$.stage' },
    });
    this.#alarm('ApiThrottled', {
      subject: 'api',
      kind: 'throttled-requests',
      metric: throttledFilter.metric({
        statistic: 'Sum',
        period: throttled.period,
        dimensionsMap: { stage: props.stageName },
      }),
      threshold: throttled,
      description:
        'API Gateway answered 429 to 10+ requests in 5 minutes, twice in 15: the stage throttling limits (api:throttlingRateLimit/BurstLimit) are too low for the traffic, or one client floods. Access logs: filter status = "429" | stats count() by ip.',
    });

    const idp = ALARM_THRESHOLDS.authorizerIdpErrors;
    this.#alarm('AuthorizerIdpErrors', {
      subject: AUTHORIZER_ROUTE,
      kind: 'idp-errors',
      metric: this.#emf('AuthErrors', AUTHORIZER_ROUTE, idp.period),
      threshold: idp,
      description:
        'The authorizer could not verify tokens because of the identity provider (JWKS unreachable, slow or misconfigured); callers get 503 with Retry-After for tokens it could not check (401 for a key of the JWKS that is unusable). Check the authorizer log (reason, cause) and auth:jwksUrl / auth:issuer of the stage.',
    });

    const stale = ALARM_THRESHOLDS.authorizerJwksRefreshFailures;
    this.#alarm('AuthorizerJwksStale', {
      subject: AUTHORIZER_ROUTE,
      kind: 'jwks-stale',
      metric: this.#emf('JwksRefreshFailures', AUTHORIZER_ROUTE, stale.period),
      threshold: stale,
      description:
        'The authorizer has failed to refresh the JWKS for 15 minutes and still verifies tokens with the keys it fetched before: a key the identity provider withdrew stays trusted, and tokens signed with a newly rotated key will get 503 (the provider cannot be asked for it). Authorizer log: reason = "jwks-refresh" (detail); check the provider and the stage\'s auth:jwksUrl.',
    });

    const failures = ALARM_THRESHOLDS.authorizerFailures;
    this.#alarm('AuthorizerFailures', {
      subject: AUTHORIZER_ROUTE,
      kind: 'failures',
      metric: new MathExpression({
        // Lambda counts every thrown Unauthorized (and unavailable) as an error, so rejected and
        // unverifiable tokens are subtracted; what is left crashed, timed out or failed to start.
        expression: 'errors - FILL(rejections, 0) - FILL(idpErrors, 0)',
        usingMetrics: {
          errors: props.authorizer.function.metricErrors({ statistic: 'Sum', period: failures.period }),
          rejections: this.#emf('AuthRejections', AUTHORIZER_ROUTE, failures.period),
          idpErrors: this.#emf('AuthErrors', AUTHORIZER_ROUTE, failures.period),
        },
        period: failures.period,
        label: 'authorizer errors other than token rejections',
      }),
      threshold: failures,
      description:
        'The authorizer failed other than by rejecting a token (crash, timeout, init error); API Gateway answers those callers 503 (an authorizer error, AUTHORIZER_CONFIGURATION_ERROR) or 500. Authorizer log: level = "ERROR" or Lambda "Task timed out" / INIT errors; check recent deploys and its environment.',
    });

    for (const [name, table] of Object.entries(props.tables) as [TableName, ITable][]) {
      this.#tableAlarms(name, table);
    }

    const retries = ALARM_THRESHOLDS.dynamoDbRetryRatePercent;
    const routeTable: readonly (Route & { operationId: OperationId })[] = routes;
    for (const route of routeTable.filter((r) => r.data)) {
      this.#alarm(`${route.operationId}DynamoDbRetries`, {
        subject: route.operationId,
        kind: 'dynamodb-retries',
        metric: new MathExpression({
          expression: 'IF(requests > 0, 100 * FILL(retries, 0) / requests, 0)',
          usingMetrics: {
            retries: this.#emf('DynamoDbRetries', route.operationId, retries.period),
            requests: this.#emf('Requests', route.operationId, retries.period),
          },
          period: retries.period,
          label: `${route.operationId} DynamoDbRetries % of Requests`,
        }),
        threshold: retries,
        description: `${route.operationId} retried DynamoDB calls for 10%+ of its requests in 2 of 3 five-minute periods (conflicts, throttling, timeouts): latency grows, and 503s follow when retries run out. Compare the table's conflict and throttle alarms.`,
      });
    }

    const probe = ALARM_THRESHOLDS.probeFailures;
    this.#alarm('ProbeFailed', {
      subject: PROBE_ROUTE,
      kind: 'failed',
      metric: this.#emf('ProbeSuccess', PROBE_ROUTE, probe.period, 'Minimum'),
      threshold: probe,
      comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
      // No datapoint means the probe did not run or could not report: as bad as a failure.
      treatMissingData: TreatMissingData.BREACHING,
      description:
        'The synthetic probe failed twice in a row, or stopped reporting, for 10 minutes: the API may be down for everyone even though no request-driven alarm can fire without requests. Probe log: message = "probe failed" (checks: openapi, token, authorized-read); then the API 5xx alarms, the identity provider and the probe secret.',
    });

    this.#creditPosterAlarms(props.creditPoster);

    this.dashboard = addServiceDashboard(this, {
      ...props,
      alarms: this.alarms,
      operationIds,
      everyFunction,
      emf: (metricName, route, period, statistic) => this.#emf(metricName, route, period, statistic),
      method: (operationId) => this.#method(operationId),
    });
    const fiveMinutes = Duration.minutes(5);
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Credit poster: stream iterator age max (ms) / failed batches waiting',
        left: [
          props.creditPoster.function.function.metric('IteratorAge', {
            statistic: 'Maximum',
            period: fiveMinutes,
          }),
        ],
        right: [
          props.creditPoster.failureQueue.metricApproximateNumberOfMessagesVisible({
            statistic: 'Maximum',
            period: fiveMinutes,
          }),
        ],
        width: 24,
        height: 6,
      }),
    );
  }

  /**
   * The poster falling behind the stream (IteratorAge: how old the newest record it took was), and
   * a batch it gave up on (the failure queue). Either way the credits wait in the clearing account,
   * the money safe; the runbook row (docs/operations.md) "The credit poster alarms" says how to re-drive them.
   */
  #creditPosterAlarms(poster: CreditPoster): void {
    const age = ALARM_THRESHOLDS.creditPosterIteratorAgeMs;
    this.#alarm('CreditPosterIteratorAge', {
      subject: CREDIT_POSTER_SUBJECT,
      kind: 'iterator-age',
      metric: poster.function.function.metric('IteratorAge', { statistic: 'Maximum', period: age.period }),
      threshold: age,
      description:
        'The credit poster is a minute or more behind the wallets table stream, in 3 of 5 minutes: payments to hot wallets stay pending longer (the money waits in the clearing account). Poster log: level = "ERROR"; Lambda errors, throttles and duration of the poster; the wallets table throttle and conflict alarms. runbook (docs/operations.md): "The credit poster alarms".',
    });
    const failed = ALARM_THRESHOLDS.creditPosterFailedBatches;
    this.#alarm('CreditPosterFailedBatches', {
      subject: CREDIT_POSTER_SUBJECT,
      kind: 'failed-batches',
      metric: poster.failureQueue.metricApproximateNumberOfMessagesVisible({
        statistic: 'Maximum',
        period: failed.period,
      }),
      threshold: failed,
      description:
        'The credit poster gave up on a batch of stream records after its retries (or the records grew too old): those credits stay unposted, in the clearing account and the pending index, until re-driven. runbook (docs/operations.md): "The credit poster alarms".',
    });
  }

  #tableAlarms(name: TableName, table: ITable): void {
    const operations = tableOperations(name);
    // A table no route touches has nothing to watch (and an empty sum is no metric).
    if (operations.length === 0) return;
    const subject = `${name}-table`;
    const errors = ALARM_THRESHOLDS.dynamoDbSystemErrors;
    this.#alarm(`${name}TableSystemErrors`, {
      subject,
      kind: 'system-errors',
      metric: sumOverOperations(name, table, 'SystemErrors', errors.period),
      threshold: errors,
      description: `DynamoDB answered 500s on the ${name} table. Check the AWS Health Dashboard for DynamoDB in the region; the functions retry, so watch the 5xx alarms for client impact.`,
    });
    const throttled = ALARM_THRESHOLDS.dynamoDbThrottledRequests;
    this.#alarm(`${name}TableThrottled`, {
      subject,
      kind: 'throttled-requests',
      metric: sumOverOperations(name, table, 'ThrottledRequests', throttled.period),
      threshold: throttled,
      description: `DynamoDB throttled requests on the ${name} table in 2 of 3 five-minute periods. On demand, that is a hot partition key (one wallet or pet hammered) or the table's maximum throughput; Contributor Insights on the table names the key.`,
    });
    if (operations.includes(Operation.TRANSACT_WRITE_ITEMS)) {
      const conflicts = ALARM_THRESHOLDS.transactionConflicts;
      this.#alarm(`${name}TableTransactionConflicts`, {
        subject,
        kind: 'transaction-conflicts',
        metric: table.metric('TransactionConflict', { statistic: 'Sum', period: conflicts.period }),
        threshold: conflicts,
        description: `Transactions on the ${name} table conflicted with concurrent ones (20+ in 5 minutes, in 2 of 3 periods): many concurrent writes of the same items (${CONFLICTING_WRITES[name]}). The functions retry; if 5xx or retry alarms follow, find the hot key in the log of the route the retry alarm names. runbook (docs/operations.md): "<table>-table-transaction-conflicts".`,
      });
    }
  }

  #alarm(id: string, spec: AlarmSpec): Alarm {
    const alarm = new Alarm(this, id, {
      alarmName: `${alarmNamePrefix(this.#props.stageName)}${spec.subject}-${spec.kind}`,
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold.threshold,
      comparisonOperator: spec.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: spec.threshold.periods,
      datapointsToAlarm: spec.threshold.datapoints,
      treatMissingData: spec.treatMissingData ?? TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(this.#props.alarmTopic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
    return alarm;
  }

  /** A metric the functions emit as EMF (shared/observability/telemetry.ts), by service, stage and route. */
  #emf(metricName: string, route: string, period: Duration, statistic = 'Sum'): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { service: SERVICE, stage: this.#props.stageName, route },
      statistic,
      period,
    });
  }

  #method(operationId: OperationId): Method {
    const method = this.#props.methods.get(operationId);
    if (!method) throw new Error(`No API method for ${operationId}`);
    return method;
  }
}
