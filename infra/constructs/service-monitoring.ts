import { Duration } from 'aws-cdk-lib';
import type { Method, RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { ProjectFunction } from '#infra/constructs/project-function.ts';
import { AUTHORIZER_ROUTE, METRICS_NAMESPACE } from '#shared/observability/telemetry.ts';
import { type OperationId, type Route, routes, type TableName } from '#shared/routes.ts';

/** The route whose EMF lines carry the transfer metrics (functions/send-money/http-adapter.ts). */
const TRANSFER_ROUTE: OperationId = 'sendMoney';

/** What every alarm name of a stage starts with; the alarm topic lets exactly these publish. */
export function alarmNamePrefix(stageName: string): string {
  return `wallet-catalog-${stageName}-`;
}

/** Name of the metric the access-log filter counts API Gateway's own 429 answers in. */
export const API_THROTTLED_METRIC = 'ApiThrottledRequests';

/**
 * Every threshold in one place, each with its evaluation: `periods` datapoints are evaluated,
 * `datapoints` of them must breach. The rates need a few bad minutes, not one bad request, so a
 * lone cold start or client retry storm does not page anyone; counts of things that should
 * never happen (throttled functions, crashed authorizers) fire on the first period.
 */
export const ALARM_THRESHOLDS = {
  /** 5xx answers in % of requests, per minute: API-wide (API Gateway) and per route (EMF). */
  serverErrorRatePercent: { threshold: 5, period: Duration.minutes(1), periods: 5, datapoints: 3 },
  /** p99 of API Gateway's Latency per method, in ms: well above a cold start (~1.5 s with the authorizer's). */
  p99LatencyMs: { threshold: 3000, period: Duration.minutes(5), periods: 3, datapoints: 3 },
  /** Throttled invocations of any one function: the account's or function's concurrency ran out. */
  lambdaThrottles: { threshold: 1, period: Duration.minutes(5), periods: 1, datapoints: 1 },
  /** 429s API Gateway answered itself (stage or account throttling): the configured limits are too tight, or abused. */
  apiThrottledRequests: { threshold: 10, period: Duration.minutes(5), periods: 3, datapoints: 2 },
  /** Tokens the authorizer could not verify because the identity provider (JWKS) failed it. */
  authorizerIdpErrors: { threshold: 3, period: Duration.minutes(5), periods: 1, datapoints: 1 },
  /**
   * Failed refreshes of the JWKS, whose keys the authorizer keeps using meanwhile: one is a blip,
   * 15 minutes of them mean a withdrawn key is still trusted and a rotated-in one still unknown.
   */
  authorizerJwksRefreshFailures: { threshold: 1, period: Duration.minutes(5), periods: 3, datapoints: 3 },
  /**
   * Authorizer invocations that failed for other reasons than a token (crash, timeout, bad
   * configuration). Above 1 because the subtraction behind it can be off by an invocation that
   * straddles two periods; a single crash still shows as a 500 in the API's 5xx rate.
   */
  authorizerFailures: { threshold: 3, period: Duration.minutes(5), periods: 1, datapoints: 1 },
  /** DynamoDB's own 500s on a table: the SDK retries single ones; a handful means trouble on AWS's side. */
  dynamoDbSystemErrors: { threshold: 5, period: Duration.minutes(5), periods: 1, datapoints: 1 },
  /** Throttled DynamoDB requests on an on-demand table: a hot key or a table-level limit, if it persists. */
  dynamoDbThrottledRequests: { threshold: 1, period: Duration.minutes(5), periods: 3, datapoints: 2 },
  /** Transactions rejected for touching items another transaction holds: contention on hot wallets. */
  transactionConflicts: { threshold: 20, period: Duration.minutes(5), periods: 3, datapoints: 2 },
  /** Retries after conflicts, throttling or timeouts, in % of a route's requests (EMF DynamoDbRetries). */
  dynamoDbRetryRatePercent: { threshold: 10, period: Duration.minutes(5), periods: 3, datapoints: 2 },
} as const;

/**
 * The CloudWatch `Operation`s an IAM action lets a function call. Transactions are authorised by
 * the item actions inside them, so an item action opens the transaction too.
 */
const OPERATIONS_BY_ACTION: Readonly<Record<string, readonly Operation[]>> = {
  'dynamodb:GetItem': [Operation.GET_ITEM, Operation.TRANSACT_GET_ITEMS],
  'dynamodb:PutItem': [Operation.PUT_ITEM, Operation.TRANSACT_WRITE_ITEMS],
  'dynamodb:UpdateItem': [Operation.UPDATE_ITEM, Operation.TRANSACT_WRITE_ITEMS],
  'dynamodb:DeleteItem': [Operation.DELETE_ITEM, Operation.TRANSACT_WRITE_ITEMS],
  'dynamodb:ConditionCheckItem': [Operation.TRANSACT_WRITE_ITEMS],
  'dynamodb:Query': [Operation.QUERY],
  'dynamodb:Scan': [Operation.SCAN],
  'dynamodb:BatchGetItem': [Operation.BATCH_GET_ITEM],
  'dynamodb:BatchWriteItem': [Operation.BATCH_WRITE_ITEM],
};

/**
 * The DynamoDB operations the route table's grants make possible on a table: what its error and
 * throttling alarms sum over. Summing all fourteen would exceed the 10 metrics an alarm may use.
 */
export function tableOperations(table: TableName): Operation[] {
  const operations = new Set<Operation>();
  const routeTable: readonly Route[] = routes;
  for (const route of routeTable) {
    if (route.data?.table !== table) continue;
    for (const action of route.data.actions) {
      const mapped = OPERATIONS_BY_ACTION[action];
      if (!mapped) throw new Error(`${route.operationId}: no CloudWatch operation is known for ${action}`);
      for (const operation of mapped) operations.add(operation);
    }
  }
  return [...operations].sort();
}

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
}

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
}

/**
 * The alarms and the dashboard of one stage. Every alarm is named
 * `wallet-catalog-<stage>-<subject>-<kind>`, notifies the alarm topic on ALARM and on OK, and
 * treats missing data as not breaching: every metric here is only published when something
 * happens (a request, an error, a retry), so no data means nothing went wrong. Silence of the
 * whole service is what the pipeline's smoke test, not an alarm, is for.
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

    for (const operationId of operationIds) {
      this.#alarm(`${operationId}5xxRate`, {
        subject: operationId,
        kind: '5xx-rate',
        metric: new MathExpression({
          // ServerErrors is only emitted by failed requests: missing means none.
          expression: 'IF(requests > 0, 100 * FILL(errors, 0) / requests, 0)',
          usingMetrics: {
            errors: this.#emf('ServerErrors', operationId, rate.period),
            requests: this.#emf('Requests', operationId, rate.period),
          },
          period: rate.period,
          label: `${operationId} ServerErrors % of Requests`,
        }),
        threshold: rate,
        description: `5%+ of ${operationId} requests ended in a 5xx from its function in 3 of 5 minutes. Logs Insights on its log group: filter status >= 500 | stats count() by outcome.`,
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
        'The authorizer could not verify tokens because of the identity provider (JWKS unreachable, slow or misconfigured); callers get 401s for valid tokens. Check the authorizer log (reason, cause) and auth:jwksUrl / auth:issuer of the stage.',
    });

    const stale = ALARM_THRESHOLDS.authorizerJwksRefreshFailures;
    this.#alarm('AuthorizerJwksStale', {
      subject: AUTHORIZER_ROUTE,
      kind: 'jwks-stale',
      metric: this.#emf('JwksRefreshFailures', AUTHORIZER_ROUTE, stale.period),
      threshold: stale,
      description:
        'The authorizer has failed to refresh the JWKS for 15 minutes and still verifies tokens with the keys it fetched before: a key the identity provider withdrew stays trusted, and tokens signed with a newly rotated key will get 401. Authorizer log: reason = "jwks-refresh" (detail); check the provider and the stage\'s auth:jwksUrl.',
    });

    const failures = ALARM_THRESHOLDS.authorizerFailures;
    this.#alarm('AuthorizerFailures', {
      subject: AUTHORIZER_ROUTE,
      kind: 'failures',
      metric: new MathExpression({
        // Lambda counts every thrown Unauthorized as an error, so rejected and unverifiable
        // tokens are subtracted; what is left crashed, timed out or failed to start.
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
        'The authorizer failed other than by rejecting a token (crash, timeout, init error); API Gateway answers 500 to those callers. Authorizer log: level = "ERROR" or Lambda "Task timed out" / INIT errors; check recent deploys and its environment.',
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

    this.dashboard = this.#dashboard(operationIds, everyFunction);
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
        description: `Transactions on the ${name} table conflicted with concurrent ones (20+ in 5 minutes, in 2 of 3 periods): many concurrent transfers on the same wallets. The functions retry; if 5xx or retry alarms follow, find the hot address in the sendMoney log.`,
      });
    }
  }

  #alarm(id: string, spec: AlarmSpec): Alarm {
    const alarm = new Alarm(this, id, {
      alarmName: `${alarmNamePrefix(this.#props.stageName)}${spec.subject}-${spec.kind}`,
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: spec.threshold.periods,
      datapointsToAlarm: spec.threshold.datapoints,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(this.#props.alarmTopic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
    return alarm;
  }

  /** A metric the functions emit as EMF (shared/observability/telemetry.ts), by stage and route. */
  #emf(metricName: string, route: string, period: Duration, statistic = 'Sum'): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { stage: this.#props.stageName, route },
      statistic,
      period,
    });
  }

  #method(operationId: OperationId): Method {
    const method = this.#props.methods.get(operationId);
    if (!method) throw new Error(`No API method for ${operationId}`);
    return method;
  }

  #dashboard(operationIds: OperationId[], everyFunction: [string, ProjectFunction][]): Dashboard {
    const { api, stageName, tables } = this.#props;
    const stage = api.deploymentStage;
    const fiveMinutes = Duration.minutes(5);
    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `wallet-catalog-${stageName}`,
      defaultInterval: Duration.hours(3),
    });
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
      new GraphWidget({ title, left, right, width: 12, height: 6 });
    const perRoute = (metricName: string, statistic = 'Sum') =>
      operationIds.map((id) => this.#emf(metricName, id, fiveMinutes, statistic).with({ label: id }));
    const perFunction = (metric: (fn: ProjectFunction) => Metric) =>
      everyFunction.map(([name, fn]) => metric(fn).with({ label: name }));
    const perTable = (
      metric: (name: TableName, table: ITable) => IMetric,
      label: (name: TableName) => string = (name) => name,
    ) =>
      (Object.entries(tables) as [TableName, ITable][]).map(([name, table]) =>
        labelled(metric(name, table), label(name)),
      );

    dashboard.addWidgets(
      new TextWidget({
        markdown: `# wallet-catalog ${stageName}\nAlarms notify the stage's alarm topic; the README's runbook says what each one means.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 6 }),
    );
    dashboard.addWidgets(
      graph(
        'API requests, 4xx and 5xx',
        [stage.metricCount({ statistic: 'Sum', period: fiveMinutes })],
        [
          stage.metricClientError({ statistic: 'Sum', period: fiveMinutes }),
          stage.metricServerError({ statistic: 'Sum', period: fiveMinutes }),
        ],
      ),
      graph('API latency p50 / p99 (ms)', [
        stage.metricLatency({ statistic: 'p50', period: fiveMinutes }),
        stage.metricLatency({ statistic: 'p99', period: fiveMinutes }),
      ]),
    );
    dashboard.addWidgets(
      graph(
        'p99 latency by route (ms, API Gateway)',
        operationIds.map((id) =>
          this.#method(id)
            .metricLatency(stage, { statistic: 'p99', period: fiveMinutes })
            .with({ label: id }),
        ),
      ),
      graph('Requests and server errors by route (EMF)', perRoute('Requests'), perRoute('ServerErrors')),
    );
    dashboard.addWidgets(
      graph(
        'Lambda errors / throttles',
        perFunction((fn) => fn.function.metricErrors({ statistic: 'Sum', period: fiveMinutes })),
        perFunction((fn) => fn.function.metricThrottles({ statistic: 'Sum', period: fiveMinutes })),
      ),
      graph(
        'Lambda duration p99 (ms) / cold starts',
        perFunction((fn) => fn.function.metricDuration({ statistic: 'p99', period: fiveMinutes })),
        perRoute('ColdStarts'),
      ),
    );
    dashboard.addWidgets(
      graph(
        'Authorizer: rejected tokens, identity provider errors, failed JWKS refreshes / Lambda errors',
        [
          this.#emf('AuthRejections', AUTHORIZER_ROUTE, fiveMinutes),
          this.#emf('AuthErrors', AUTHORIZER_ROUTE, fiveMinutes),
          this.#emf('JwksRefreshFailures', AUTHORIZER_ROUTE, fiveMinutes),
        ],
        [this.#props.authorizer.function.metricErrors({ statistic: 'Sum', period: fiveMinutes })],
      ),
      graph(
        'Transfers, idempotent replays / volume (minor units)',
        [
          this.#emf('Transfers', TRANSFER_ROUTE, fiveMinutes),
          this.#emf('IdempotentReplays', TRANSFER_ROUTE, fiveMinutes),
        ],
        [this.#emf('TransferVolumeMinor', TRANSFER_ROUTE, fiveMinutes)],
      ),
    );
    dashboard.addWidgets(
      graph(
        'DynamoDB system errors, throttled requests / transaction conflicts',
        [
          ...perTable(
            (name, table) => sumOverOperations(name, table, 'SystemErrors', fiveMinutes),
            (name) => `${name} system errors`,
          ),
          ...perTable(
            (name, table) => sumOverOperations(name, table, 'ThrottledRequests', fiveMinutes),
            (name) => `${name} throttled`,
          ),
        ],
        perTable((_, table) =>
          table.metric('TransactionConflict', { statistic: 'Sum', period: fiveMinutes }),
        ),
      ),
      graph('DynamoDB retries by route (EMF)', perRoute('DynamoDbRetries')),
    );
    return dashboard;
  }
}

/**
 * A DynamoDB per-operation metric summed over the operations {@link tableOperations} finds. Unlike
 * the table's own `metric…ForOperations`, each term is FILLed: these metrics are only published
 * for an operation that had an error or throttle, and a plain sum of sparse series has no value
 * unless every operation had one in the same period. Metric ids carry the table and metric, so
 * that sums of several tables fit in one graph.
 */
export function sumOverOperations(
  name: TableName,
  table: ITable,
  metricName: 'SystemErrors' | 'ThrottledRequests',
  period: Duration,
): MathExpression {
  const usingMetrics = Object.fromEntries(
    tableOperations(name).map((operation) => [
      `${name}_${metricName.toLowerCase()}_${operation.toLowerCase()}`,
      table.metric(metricName, {
        dimensionsMap: { TableName: table.tableName, Operation: operation },
        statistic: 'Sum',
        period,
      }),
    ]),
  );
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    period,
    label: `${name} ${metricName}, all operations`,
  });
}

/** The metric under another label, where the kind of metric allows one. */
function labelled(metric: IMetric, label: string): IMetric {
  return metric instanceof Metric || metric instanceof MathExpression ? metric.with({ label }) : metric;
}
