import { readFileSync } from 'node:fs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServiceApp } from '#infra/app.ts';
import {
  ALARM_THRESHOLDS,
  API_THROTTLED_METRIC,
  tableOperations,
} from '#infra/constructs/alarm-thresholds.ts';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { METRICS_NAMESPACE, SERVICE } from '#shared/observability/telemetry.ts';
import { type OperationId, type Route, routes, type TableName } from '#shared/routes.ts';
import { buildServiceApp, logicalId, synthesize } from '../support/cdk.ts';

interface MetricDataQuery {
  Id: string;
  Expression?: string;
  MetricStat?: {
    Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
    Period: number;
    Stat: string;
  };
}
interface AlarmProps {
  AlarmName: string;
  AlarmDescription?: string;
  AlarmActions: unknown[];
  OKActions: unknown[];
  Threshold: number;
  EvaluationPeriods: number;
  DatapointsToAlarm: number;
  ComparisonOperator: string;
  TreatMissingData: string;
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Statistic?: string;
  ExtendedStatistic?: string;
  Period?: number;
  Metrics?: MetricDataQuery[];
}

const routeTable: readonly (Route & { operationId: OperationId })[] = routes;
const tableNames = Object.keys(tables) as TableName[];

let built: ServiceApp;
let service: Template;
let stateful: Template;

beforeAll(() => {
  ({ built, service, stateful } = synthesize());
});

const alarms = (): AlarmProps[] =>
  Object.values(service.findResources('AWS::CloudWatch::Alarm')).map((r) => r.Properties as AlarmProps);

function alarm(name: string): AlarmProps {
  const found = alarms().find((a) => a.AlarmName === `wallet-catalog-dev-${name}`);
  if (!found) throw new Error(`No alarm wallet-catalog-dev-${name}`);
  return found;
}

/** The metrics of an expression alarm by id, and its one expression. */
function queries(props: AlarmProps): {
  expression: string;
  metrics: Record<string, MetricDataQuery['MetricStat']>;
} {
  const all = props.Metrics ?? [];
  const expression = all.find((q) => q.Expression)?.Expression;
  if (!expression) throw new Error(`${props.AlarmName} has no expression`);
  return {
    expression,
    metrics: Object.fromEntries(all.filter((q) => q.MetricStat).map((q) => [q.Id, q.MetricStat])),
  };
}

/** An EMF metric of the service, as an alarm names it: per service (Powertools'), stage and route. */
const emfMetric = (metricName: string, route: string) => ({
  Namespace: METRICS_NAMESPACE,
  MetricName: metricName,
  Dimensions: [
    { Name: 'route', Value: route },
    { Name: 'service', Value: SERVICE },
    { Name: 'stage', Value: 'dev' },
  ],
});

const dimensions = (list: { Name: string; Value: unknown }[] | undefined) =>
  Object.fromEntries((list ?? []).map((d) => [d.Name, d.Value]));

/** How the service stack refers to a table of the stateful stack (a cross-stack reference naming its logical id). */
const tableReference = (name: TableName) =>
  new RegExp(`Ref${logicalId(built.stateful, built.stateful.tables[name])}`);

describe('alarms', () => {
  it('exist for every route, function and table, and nothing else', () => {
    const expected = [
      'api-5xx-rate',
      'api-throttled-requests',
      'authorizer-throttles',
      'authorizer-idp-errors',
      'authorizer-jwks-stale',
      'authorizer-failures',
      'probe-failed',
      ...routeTable.flatMap((r) => [
        `${r.operationId}-5xx-rate`,
        `${r.operationId}-p99-latency`,
        `${r.operationId}-throttles`,
        ...(r.data ? [`${r.operationId}-dynamodb-retries`] : []),
      ]),
      ...tableNames.flatMap((t) => [
        `${t}-table-system-errors`,
        `${t}-table-throttled-requests`,
        `${t}-table-transaction-conflicts`,
      ]),
      'ledger-audit-failed',
      'ledger-audit-execution-failed',
      'ledger-audit-not-run',
      ...[
        'creditPoster',
        'probe',
        'webhookDeriver',
        'webhookDispatcher',
        'batchSweep',
        'ledgerAudit',
        'ledgerAuditSegment',
      ].map((worker) => `${worker}-throttles`),
      'batchSweep-errors',
      'creditPoster-iterator-age',
      'creditPoster-failed-batches',
      'webhooks-delivery-failures',
      'webhooks-oldest-undelivered',
      'webhooks-deriver-behind',
      'webhooks-deriver-failed-batches',
      'webhooks-endpoints-disabled',
      'webhooks-dispatcher-errors',
    ].map((name) => `wallet-catalog-dev-${name}`);
    expect(
      alarms()
        .map((a) => a.AlarmName)
        .sort(),
    ).toEqual(expected.sort());
  });

  it('notify the alarm topic of the stateful stack on ALARM and on OK; request-driven ones treat missing data as nothing wrong', () => {
    const topicId = logicalId(built.stateful, built.stateful.alarmTopic);
    // Those whose metric a scheduled worker publishes on every run: no datapoint is a run missing.
    const silenceBreaches = ['probe-failed', 'webhooks-oldest-undelivered', 'ledger-audit-not-run'].map(
      (name) => `wallet-catalog-dev-${name}`,
    );
    for (const props of alarms().filter((a) => silenceBreaches.includes(a.AlarmName))) {
      expect(props.TreatMissingData, props.AlarmName).toBe('breaching');
      expect(props.OKActions, props.AlarmName).toEqual(props.AlarmActions);
      expect(JSON.stringify(props.AlarmActions), props.AlarmName).toContain(topicId);
    }
    for (const props of alarms().filter((a) => !silenceBreaches.includes(a.AlarmName))) {
      expect(props.AlarmActions, props.AlarmName).toHaveLength(1);
      // A strong reference: an export of the stateful stack, which CloudFormation keeps while it is imported.
      expect(JSON.stringify(props.AlarmActions), props.AlarmName).toContain(
        `"Fn::ImportValue":"wallet-catalog-dev-stateful:`,
      );
      expect(JSON.stringify(props.AlarmActions), props.AlarmName).toContain(topicId);
      expect(props.OKActions, props.AlarmName).toEqual(props.AlarmActions);
      expect(props.TreatMissingData, props.AlarmName).toBe('notBreaching');
      expect(props.ComparisonOperator, props.AlarmName).toBe('GreaterThanOrEqualToThreshold');
      expect(props.DatapointsToAlarm, props.AlarmName).toBeLessThanOrEqual(props.EvaluationPeriods);
      // CloudWatch refuses alarms on more than 10 metrics.
      expect((props.Metrics ?? []).filter((q) => q.MetricStat).length, props.AlarmName).toBeLessThanOrEqual(
        10,
      );
    }
  });

  it('each have a row of the runbook (docs/operations.md); a description that points there names the file and a row it has', () => {
    const runbook = readFileSync('docs/operations.md', 'utf8');
    const section = runbook.slice(
      runbook.indexOf('## Runbook'),
      runbook.indexOf('\n## ', runbook.indexOf('## Runbook') + 1),
    );
    // The first cell of each row names its alarms, literally or with a <route>, <fn> or <table> placeholder.
    const rowNames = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split(' | ')[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
    const patterns = rowNames.map(
      (name) => new RegExp(`^${name.replace(/-/g, '\\-').replace(/<(route|fn|table)>/g, '[A-Za-z]+')}$`),
    );
    for (const { AlarmName, AlarmDescription } of alarms()) {
      const name = AlarmName.replace('wallet-catalog-dev-', '');
      expect(
        patterns.some((pattern) => pattern.test(name)),
        `${name} has no runbook row`,
      ).toBe(true);
      const description = AlarmDescription ?? '';
      if (!/runbook/i.test(description)) continue;
      expect(description, name).toContain('runbook (docs/operations.md)');
      for (const [, row] of description.matchAll(/runbook \(docs\/operations\.md\):? "([^"]+)"/g)) {
        expect(section.toLowerCase(), `${name} points to "${row}"`).toContain((row as string).toLowerCase());
      }
    }
  });

  it('carry the stage in their names', () => {
    const prod = Template.fromStack(buildServiceApp({ stage: 'prod' }).service);
    const names = Object.values(prod.findResources('AWS::CloudWatch::Alarm')).map(
      (r) => r.Properties.AlarmName,
    );
    expect(names.length).toBe(alarms().length);
    for (const name of names) expect(name).toMatch(/^wallet-catalog-prod-/);
  });

  it('5xx rate: API Gateway 5XXError over Count of the stage, 5% in 3 of 5 minutes', () => {
    const props = alarm('api-5xx-rate');
    expect(props).toMatchObject({ Threshold: 5, EvaluationPeriods: 5, DatapointsToAlarm: 3 });
    const { expression, metrics } = queries(props);
    expect(expression).toBe('IF(requests > 0, 100 * errors / requests, 0)');
    const stageDimensions = { ApiName: 'wallet-catalog-dev-service', Stage: expect.anything() };
    expect(metrics.errors).toMatchObject({ Metric: { Namespace: 'AWS/ApiGateway', MetricName: '5XXError' } });
    expect(metrics.requests).toMatchObject({ Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Count' } });
    for (const metric of [metrics.errors, metrics.requests]) {
      expect(metric).toMatchObject({ Period: 60, Stat: 'Sum' });
      expect(dimensions(metric?.Metric.Dimensions)).toEqual(stageDimensions);
    }
  });

  it("5xx rate per route: EMF ServerErrors and the function's Lambda Errors (crashes, timeouts, OOM, init errors, which write no EMF) over all its requests, missing counting as none", () => {
    const all = '(FILL(requests, 0) + FILL(crashes, 0))';
    for (const { operationId } of routeTable) {
      const props = alarm(`${operationId}-5xx-rate`);
      expect(props).toMatchObject({ Threshold: 5, EvaluationPeriods: 5, DatapointsToAlarm: 3 });
      const { expression, metrics } = queries(props);
      expect(expression).toBe(`IF(${all} > 0, 100 * (FILL(errors, 0) + FILL(crashes, 0)) / ${all}, 0)`);
      expect(metrics.errors?.Metric).toEqual(emfMetric('ServerErrors', operationId));
      expect(metrics.requests?.Metric).toMatchObject({
        MetricName: 'Requests',
        Namespace: METRICS_NAMESPACE,
      });
      const fn = built.service.functions.get(operationId);
      expect(metrics.crashes).toMatchObject({ Period: 60, Stat: 'Sum' });
      expect(metrics.crashes?.Metric).toEqual({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [
          { Name: 'FunctionName', Value: { Ref: logicalId(built.service, fn?.function as never) } },
        ],
      });
    }
  });

  it("p99 latency per route: API Gateway's Latency of the route's resource and method, 3 s for 15 minutes", () => {
    for (const route of routeTable) {
      const props = alarm(`${route.operationId}-p99-latency`);
      expect(props).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        MetricName: 'Latency',
        ExtendedStatistic: 'p99',
        Period: 300,
        Threshold: ALARM_THRESHOLDS.p99LatencyMs.threshold,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
      });
      expect(dimensions(props.Dimensions)).toMatchObject({
        ApiName: 'wallet-catalog-dev-service',
        Resource: route.path,
        Method: route.method,
      });
    }
    expect(ALARM_THRESHOLDS.p99LatencyMs.threshold).toBe(3000);
    // Per-method metrics exist only when the stage enables them.
    service.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [Match.objectLike({ ResourcePath: '/*', HttpMethod: '*', MetricsEnabled: true })],
    });
  });

  it('throttles: Lambda Throttles of every function of the stack, route or worker, on the first throttle in 5 minutes', () => {
    const throttleAlarms = alarms().filter((a) => a.MetricName === 'Throttles');
    const functionIds = Object.keys(service.findResources('AWS::Lambda::Function'));
    expect(functionIds.length).toBeGreaterThan(routeTable.length + 1);
    for (const id of functionIds) {
      const watching = throttleAlarms.filter(
        (a) => (dimensions(a.Dimensions).FunctionName as { Ref?: string } | undefined)?.Ref === id,
      );
      expect(watching, id).toHaveLength(1);
      expect(watching[0]).toMatchObject({
        AlarmName: expect.stringMatching(/^wallet-catalog-dev-[A-Za-z]+-throttles$/),
        Namespace: 'AWS/Lambda',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        EvaluationPeriods: 1,
      });
    }
    expect(throttleAlarms).toHaveLength(functionIds.length);
    expect(alarm('authorizer-throttles').Dimensions).toEqual([
      {
        Name: 'FunctionName',
        Value: { Ref: logicalId(built.service, built.service.authorizerFunction.function) },
      },
    ]);
    expect(alarm('webhookDispatcher-throttles').Dimensions).toEqual([
      {
        Name: 'FunctionName',
        Value: { Ref: logicalId(built.service, built.service.webhookEvents.dispatcher.function) },
      },
    ]);
  });

  it('errors: Lambda Errors of the scheduled workers whose failed runs write no metric of theirs, on the first in 5 minutes', () => {
    for (const [name, fn] of [
      ['batchSweep-errors', built.service.batchSweep.function],
      ['webhooks-dispatcher-errors', built.service.webhookEvents.dispatcher],
    ] as const) {
      expect(alarm(name), name).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(built.service, fn.function) } }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        EvaluationPeriods: 1,
      });
    }
  });

  it("throttles: API Gateway's own 429s, counted from the access log by stage", () => {
    const accessLogsId = logicalId(built.service, built.service.accessLogs);
    service.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: accessLogsId },
      FilterPattern: '{ $.status = "429" }',
      MetricTransformations: [
        {
          MetricNamespace: METRICS_NAMESPACE,
          MetricName: API_THROTTLED_METRIC,
          MetricValue: '1',
          Dimensions: [{ Key: 'stage', Value: '$.stage' }],
        },
      ],
    });
    const props = alarm('api-throttled-requests');
    expect(props).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: API_THROTTLED_METRIC,
      Statistic: 'Sum',
      Threshold: 10,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
    expect(dimensions(props.Dimensions)).toEqual({ stage: 'dev' });
  });

  it('authorizer: EMF AuthErrors (identity provider), JwksRefreshFailures for 15 minutes, and Lambda Errors less the token rejections', () => {
    expect(alarm('authorizer-idp-errors')).toMatchObject({
      ...emfMetric('AuthErrors', 'authorizer'),
      Statistic: 'Sum',
      Threshold: 3,
    });
    expect(alarm('authorizer-jwks-stale')).toMatchObject({
      ...emfMetric('JwksRefreshFailures', 'authorizer'),
      Statistic: 'Sum',
      Threshold: 1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
    const props = alarm('authorizer-failures');
    expect(props.Threshold).toBe(3);
    const { expression, metrics } = queries(props);
    expect(expression).toBe('errors - FILL(rejections, 0) - FILL(idpErrors, 0)');
    expect(metrics.errors?.Metric).toEqual({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [
        {
          Name: 'FunctionName',
          Value: { Ref: logicalId(built.service, built.service.authorizerFunction.function) },
        },
      ],
    });
    expect(metrics.rejections?.Metric).toMatchObject({
      MetricName: 'AuthRejections',
      Namespace: METRICS_NAMESPACE,
    });
    expect(metrics.idpErrors?.Metric).toMatchObject({
      MetricName: 'AuthErrors',
      Namespace: METRICS_NAMESPACE,
    });
  });

  it('DynamoDB: system errors and throttled requests per table, summed over the operations its grants allow', () => {
    expect(tableOperations('wallets')).toEqual([
      'BatchGetItem',
      'PutItem',
      'Query',
      'Scan',
      'TransactWriteItems',
      'UpdateItem',
    ]);
    expect(tableOperations('pets')).toEqual([
      'BatchGetItem',
      'DeleteItem',
      'GetItem',
      'PutItem',
      'Query',
      'TransactGetItems',
      'TransactWriteItems',
    ]);
    for (const table of tableNames) {
      for (const [kind, metricName, threshold] of [
        ['system-errors', 'SystemErrors', 5],
        ['throttled-requests', 'ThrottledRequests', 1],
      ] as const) {
        const props = alarm(`${table}-table-${kind}`);
        expect(props.Threshold).toBe(threshold);
        const { expression, metrics } = queries(props);
        const operations = Object.values(metrics).map((metric) => {
          expect(metric?.Metric).toMatchObject({ Namespace: 'AWS/DynamoDB', MetricName: metricName });
          expect(metric?.Stat).toBe('Sum');
          const dims = dimensions(metric?.Metric.Dimensions);
          expect(JSON.stringify(dims.TableName)).toMatch(tableReference(table));
          return dims.Operation;
        });
        expect(operations.sort()).toEqual(tableOperations(table));
        // Each term filled, or the sum would vanish unless every operation failed at once.
        expect(expression.split(' + ')).toEqual(Object.keys(metrics).map((id) => `FILL(${id}, 0)`));
      }
    }
  });

  it("DynamoDB: each table's alarms sum every operation some function's policy allows on it, a worker's as well as a route's", () => {
    const statements = Object.values(service.findResources('AWS::IAM::Policy')).flatMap(
      (policy) =>
        (
          policy.Properties as {
            PolicyDocument: { Statement: { Effect: string; Action: unknown; Resource: unknown }[] };
          }
        ).PolicyDocument.Statement,
    );
    for (const table of tableNames) {
      const id = logicalId(built.stateful, built.stateful.tables[table]);
      const allowed = statements
        .filter((s) => s.Effect === 'Allow')
        .filter(
          (s) => JSON.stringify(s.Resource).includes(id) && !JSON.stringify(s.Resource).includes('Stream'),
        )
        .flatMap((s) => [s.Action].flat() as string[])
        .filter((action) => action.startsWith('dynamodb:'));
      expect(allowed.length, table).toBeGreaterThan(0);
      for (const action of new Set(allowed)) {
        // A transaction is authorised by its items' actions; a condition check exists only in one.
        const operation =
          action === 'dynamodb:ConditionCheckItem' ? 'TransactWriteItems' : action.slice('dynamodb:'.length);
        expect(tableOperations(table), `${table}: ${action}`).toContain(operation);
      }
    }
  });

  it('transaction conflicts: DynamoDB TransactionConflict per table, and EMF DynamoDbRetries per route with data', () => {
    for (const table of tableNames) {
      const props = alarm(`${table}-table-transaction-conflicts`);
      expect(props).toMatchObject({
        Namespace: 'AWS/DynamoDB',
        MetricName: 'TransactionConflict',
        Statistic: 'Sum',
        Threshold: 20,
      });
      expect(JSON.stringify(dimensions(props.Dimensions).TableName)).toMatch(tableReference(table));
    }
    for (const route of routeTable.filter((r) => r.data)) {
      const props = alarm(`${route.operationId}-dynamodb-retries`);
      expect(props.Threshold).toBe(10);
      const { expression, metrics } = queries(props);
      expect(expression).toBe('IF(requests > 0, 100 * FILL(retries, 0) / requests, 0)');
      expect(metrics.retries?.Metric).toEqual(emfMetric('DynamoDbRetries', route.operationId));
    }
  });
});

describe('dashboard', () => {
  it('is named after the stage and shows every alarm', () => {
    const [dashboard] = Object.values(service.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboard?.Properties.DashboardName).toBe('wallet-catalog-dev');
    const body = JSON.stringify(dashboard?.Properties.DashboardBody);
    for (const id of Object.keys(service.findResources('AWS::CloudWatch::Alarm'))) expect(body).toContain(id);
  });
});

describe('alarm topic', () => {
  it('is encrypted under a rotating key of its own that CloudWatch may use, and refuses plain HTTP', () => {
    const keyId = Object.keys(stateful.findResources('AWS::KMS::Key'))[0];
    // CloudWatch acts for this stage's alarms in this account only.
    const onlyThisStagesAlarms = {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':cloudwatch:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':alarm:wallet-catalog-dev-*',
            ],
          ],
        },
      },
    };
    stateful.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
      DisplayName: 'wallet-catalog dev alarms',
    });
    stateful.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Condition: onlyThisStagesAlarms,
          }),
        ]),
      },
    });
    stateful.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: onlyThisStagesAlarms,
          }),
        ]),
      },
    });
    stateful.hasOutput('AlarmTopicArn', {});
  });

  it('mails the address of the stage when one is set, and has no subscriber otherwise', () => {
    stateful.resourceCountIs('AWS::SNS::Subscription', 0);
    const mailed = buildServiceApp({ stages: { dev: { 'alarms:email': 'oncall@example.com' } } });
    Template.fromStack(mailed.stateful).hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
  });
});

describe('logs', () => {
  it('keeps every log group of the service for the retention of the stage: functions, access and execution logs', () => {
    const groups = Object.values(service.findResources('AWS::Logs::LogGroup'));
    // One per function (authorizer, probe, ledger audit's child and reducer, credit poster, batch
    // sweep, event deriver and webhook dispatcher included), access logs, execution logs, and the
    // ledger audit state machine's execution logs.
    expect(groups).toHaveLength(routeTable.length + 8 + 2 + 1);
    for (const group of groups) expect(group.Properties.RetentionInDays).toBe(14);
    const prod = Template.fromStack(buildServiceApp({ stage: 'prod' }).service);
    prod.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });

  it("creates API Gateway's execution log group itself, before the stage can write to it", () => {
    const executionLogsId = logicalId(built.service, built.service.executionLogs);
    const apiId = logicalId(built.service, built.service.api);
    expect(service.toJSON().Resources[executionLogsId].Properties.LogGroupName).toEqual({
      'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: apiId }, '/dev']],
    });
    const [stage] = Object.values(service.findResources('AWS::ApiGateway::Stage'));
    expect(stage?.DependsOn).toContain(executionLogsId);
  });
});

describe('tracing', () => {
  it('traces the API stage and every function with X-Ray', () => {
    service.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
    const functions = Object.values(service.findResources('AWS::Lambda::Function'));
    // The routes', the authorizer, the synthetic probe, the ledger audit's child and reducer, the
    // credit poster, the batch sweep, the event deriver and the webhook dispatcher.
    expect(functions).toHaveLength(routeTable.length + 8);
    for (const fn of functions) expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
  });
});

describe('tracing', () => {
  const ADOT_LAYER = 'arn:aws:lambda:us-east-1:615299751070:layer:AWSOpenTelemetryDistroJs:8';

  /** Each function of the service stack the project built, with its properties in the template. */
  function projectFunctions(overrides: Record<string, unknown> = {}) {
    const { built, service } = synthesize(overrides);
    const resources = service.findResources('AWS::Lambda::Function');
    const functions = built.service.node.findAll().filter((c) => c instanceof ProjectFunction);
    expect(functions.length).toBeGreaterThan(routes.length);
    return functions.map((fn) => {
      const properties = resources[logicalId(built.service, fn.function)]?.Properties as {
        Layers?: unknown[];
        Environment: { Variables: Record<string, unknown> };
        TracingConfig: { Mode: string };
      };
      return { path: fn.node.path, ...properties };
    });
  }

  it('is X-Ray alone by default: no ADOT layer, no wrapper', () => {
    for (const fn of projectFunctions()) {
      expect(fn.TracingConfig.Mode, fn.path).toBe('Active');
      expect(fn.Layers, fn.path).toBeUndefined();
      expect(fn.Environment.Variables, fn.path).not.toHaveProperty('AWS_LAMBDA_EXEC_WRAPPER');
    }
  });

  it('runs every function under the ADOT layer and its wrapper when tracing:adotLayerArn is set', () => {
    for (const fn of projectFunctions({ 'tracing:adotLayerArn': ADOT_LAYER })) {
      expect(fn.Layers, fn.path).toEqual([ADOT_LAYER]);
      expect(fn.Environment.Variables.AWS_LAMBDA_EXEC_WRAPPER, fn.path).toBe('/opt/otel-instrument');
    }
  });

  it('refuses a tracing:adotLayerArn that is not a layer version ARN', () => {
    for (const arn of ['arn:aws:lambda:us-east-1:615299751070:layer:AWSOpenTelemetryDistroJs', 'otel']) {
      expect(() => buildServiceApp({ 'tracing:adotLayerArn': arn })).toThrow(/tracing:adotLayerArn/);
    }
  });
});
