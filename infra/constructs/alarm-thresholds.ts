import { Duration } from 'aws-cdk-lib';
import { type IMetric, MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import { WORKER_GRANTS } from '#infra/worker-grants.ts';
import { type Route, routes, type TableName } from '#shared/routes.ts';

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
  /**
   * p99 of API Gateway's Latency per method, in ms: well above a cold start, the authorizer's
   * included (estimates: BENCHMARKS.md, "Estimated cold starts on Lambda").
   */
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
  /**
   * Failed synthetic probe runs (ProbeSuccess below 1), one run every 5 minutes: two in a row, or
   * two periods without a run at all, since missing data breaches this one.
   */
  probeFailures: { threshold: 1, period: Duration.minutes(5), periods: 2, datapoints: 2 },
  /** Retries after conflicts, throttling or timeouts, in % of a route's requests (EMF DynamoDbRetries). */
  dynamoDbRetryRatePercent: { threshold: 10, period: Duration.minutes(5), periods: 3, datapoints: 2 },
  /**
   * Age of the newest stream record the credit poster took, in ms (Lambda's IteratorAge, maximum
   * per minute): its batching window and a posting take seconds, so a minute behind for 3 of 5
   * minutes is a poster that cannot keep up or keeps failing.
   */
  creditPosterIteratorAgeMs: { threshold: 60_000, period: Duration.minutes(1), periods: 5, datapoints: 3 },
  /** Batches the credit poster gave up on, waiting in its failure queue: each needs a re-drive. */
  creditPosterFailedBatches: { threshold: 1, period: Duration.minutes(5), periods: 1, datapoints: 1 },
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
 * The DynamoDB operations that some function's grant makes possible on a table, a route's (the
 * route table) or a worker's (infra/worker-grants.ts): what its error and throttling alarms sum
 * over. Summing all fourteen would exceed the 10 metrics an alarm may use.
 */
export function tableOperations(table: TableName): Operation[] {
  const operations = new Set<Operation>();
  const routeTable: readonly Route[] = routes;
  const grants = [
    ...routeTable.flatMap((route) => (route.data ? [{ who: route.operationId, ...route.data }] : [])),
    ...WORKER_GRANTS.map((grant) => ({ who: 'a worker', ...grant })),
  ];
  for (const grant of grants) {
    if (grant.table !== table) continue;
    for (const action of grant.actions) {
      const mapped = OPERATIONS_BY_ACTION[action];
      if (!mapped) throw new Error(`${grant.who}: no CloudWatch operation is known for ${action}`);
      for (const operation of mapped) operations.add(operation);
    }
  }
  return [...operations].sort();
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
export function labelled(metric: IMetric, label: string): IMetric {
  return metric instanceof Metric || metric instanceof MathExpression ? metric.with({ label }) : metric;
}
