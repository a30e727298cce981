import { Duration } from 'aws-cdk-lib';
import type { Method, RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  type Metric,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { labelled, sumOverOperations } from '#infra/constructs/alarm-thresholds.ts';
import type { ProjectFunction } from '#infra/constructs/project-function.ts';
import { AUTHORIZER_ROUTE } from '#shared/observability/telemetry.ts';
import type { OperationId, TableName } from '#shared/routes.ts';

/** The route whose EMF lines carry the transfer metrics (functions/send-money/http-adapter.ts). */
const TRANSFER_ROUTE: OperationId = 'sendMoney';

/** What the dashboard shows: the resources and alarms ServiceMonitoring watches. */
export interface DashboardInputs {
  readonly stageName: string;
  readonly api: RestApi;
  readonly authorizer: ProjectFunction;
  readonly tables: Readonly<Record<TableName, ITable>>;
  readonly alarms: Alarm[];
  readonly operationIds: readonly OperationId[];
  readonly everyFunction: readonly [string, ProjectFunction][];
  /** A metric the functions emit as EMF, by service, stage and route. */
  readonly emf: (metricName: string, route: string, period: Duration, statistic?: string) => Metric;
  readonly method: (operationId: OperationId) => Method;
}

/** The stage's dashboard: alarm states first, then traffic, latency, functions, authorizer, money and tables. */
export function addServiceDashboard(scope: Construct, inputs: DashboardInputs): Dashboard {
  const { api, stageName, tables, operationIds, everyFunction } = inputs;
  const stage = api.deploymentStage;
  const fiveMinutes = Duration.minutes(5);
  const dashboard = new Dashboard(scope, 'Dashboard', {
    dashboardName: `wallet-catalog-${stageName}`,
    defaultInterval: Duration.hours(3),
  });
  const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
    new GraphWidget({ title, left, right, width: 12, height: 6 });
  const perRoute = (metricName: string, statistic = 'Sum') =>
    operationIds.map((id) => inputs.emf(metricName, id, fiveMinutes, statistic).with({ label: id }));
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
      markdown: `# wallet-catalog ${stageName}\nAlarms notify the stage's alarm topic; the runbook (docs/operations.md) says what each one means.`,
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(
    new AlarmStatusWidget({ title: 'Alarms', alarms: inputs.alarms, width: 24, height: 6 }),
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
        inputs.method(id).metricLatency(stage, { statistic: 'p99', period: fiveMinutes }).with({ label: id }),
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
      perRoute('ColdStart'),
    ),
  );
  dashboard.addWidgets(
    graph(
      'Authorizer: rejected tokens, identity provider errors, failed JWKS refreshes / Lambda errors',
      [
        inputs.emf('AuthRejections', AUTHORIZER_ROUTE, fiveMinutes),
        inputs.emf('AuthErrors', AUTHORIZER_ROUTE, fiveMinutes),
        inputs.emf('JwksRefreshFailures', AUTHORIZER_ROUTE, fiveMinutes),
      ],
      [inputs.authorizer.function.metricErrors({ statistic: 'Sum', period: fiveMinutes })],
    ),
    graph(
      'Transfers, idempotent replays / volume (minor units)',
      [
        inputs.emf('Transfers', TRANSFER_ROUTE, fiveMinutes),
        inputs.emf('IdempotentReplays', TRANSFER_ROUTE, fiveMinutes),
      ],
      [inputs.emf('TransferVolumeMinor', TRANSFER_ROUTE, fiveMinutes)],
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
      perTable((_, table) => table.metric('TransactionConflict', { statistic: 'Sum', period: fiveMinutes })),
    ),
    graph('DynamoDB retries by route (EMF)', perRoute('DynamoDbRetries')),
  );
  return dashboard;
}
