import { Duration, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServiceApp } from '#infra/app.ts';
import { LedgerAudit } from '#infra/constructs/ledger-audit.ts';
import type { ProjectFunction } from '#infra/constructs/project-function.ts';
import { PARTIALS_PREFIX } from '#shared/wallet/audit/partial-store.ts';
import { logicalId, synthesize } from '../support/cdk.ts';

/*
 * The deployed ledger audit (infra/constructs/ledger-audit.ts) as `cdk synth` renders it: a state
 * machine whose Distributed Map runs a child Lambda per Scan segment, with retries, then the
 * reducer; on the audit's schedule; its alarms; and one grant per function on the table and one
 * on the partials bucket, each no wider than its work.
 */

let built: ServiceApp;
let service: Template;
beforeAll(() => {
  ({ built, service } = synthesize());
});

/** A synthesized template's JSON, read by path. */
interface Doc {
  readonly [key: string]: Doc;
}

const resources = (type: string): [string, Doc][] =>
  Object.entries(service.findResources(type)) as [string, Doc][];

/** The state machine's definition, each token in it (a function's ARN) rendered as `fn`. */
function definition(): Doc {
  const [[, machine] = []] = resources('AWS::StepFunctions::StateMachine');
  const body = machine?.Properties?.DefinitionString as unknown as { 'Fn::Join': [string, unknown[]] };
  const text = body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : 'fn')).join('');
  return JSON.parse(text) as Doc;
}

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

/** The statements of the function's role. */
function statementsOf(fn: ProjectFunction): Statement[] {
  const role = logicalId(built.service, fn.function.role as never);
  return resources('AWS::IAM::Policy')
    .filter(([, policy]) => JSON.stringify(policy?.Properties?.Roles).includes(role))
    .flatMap(([, policy]) => policy?.Properties?.PolicyDocument?.Statement as unknown as Statement[]);
}

const actions = (s: Statement) => [s.Action].flat().sort();

describe('the deployed ledger audit', () => {
  it('is a state machine: a plan, a Distributed Map of child Lambdas with retries, then the reducer', () => {
    const states = definition();
    expect(states?.StartAt).toBe('Plan');
    const plan = states?.States?.Plan;
    expect(plan?.Type).toBe('Pass');
    expect(plan?.Parameters?.['key.$']).toBe('States.UUID()');
    expect(plan?.Parameters?.['items.$']).toBe(
      `States.ArrayRange(0, ${Number(plan?.Parameters?.segments) - 1}, 1)`,
    );
    expect(plan?.Next).toBe('Segments');

    const map = states?.States?.Segments;
    expect(map?.Type).toBe('Map');
    expect(map?.ItemProcessor?.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(map?.ItemsPath).toBe('$.items');
    expect(map?.ItemSelector?.['segment.$']).toBe('$$.Map.Item.Value');
    expect(map?.MaxConcurrency).toBeGreaterThan(0);
    expect(map?.ResultPath).toBeNull();
    expect(map?.Next).toBe('Reduce');
    const child = map?.ItemProcessor?.States?.ScanSegment;
    expect(child?.Type).toBe('Task');
    expect(child?.Retry).toEqual([
      expect.objectContaining({ ErrorEquals: ['States.ALL'], MaxAttempts: 3, BackoffRate: 2 }),
    ]);

    const reduce = states?.States?.Reduce;
    expect(reduce?.Type).toBe('Task');
    expect(reduce?.End).toBe(true);
    // A break is the verdict, not a fault: only Lambda's own errors are tried again.
    expect(JSON.stringify(reduce?.Retry)).not.toContain('States.ALL');
  });

  it('invokes the child and the reducer functions, and runs on the schedule', () => {
    const audit = built.service.ledgerAudit;
    const [[, machine] = []] = resources('AWS::StepFunctions::StateMachine');
    const text = JSON.stringify(machine?.Properties?.DefinitionString);
    expect(text).toContain(logicalId(built.service, audit.segmentFunction.function));
    expect(text).toContain(logicalId(built.service, audit.function.function));
    expect(machine?.Properties?.TracingConfiguration).toEqual({ Enabled: true });
    const machineId = logicalId(built.service, audit.stateMachine);
    const rules = resources('AWS::Events::Rule').filter(([, rule]) =>
      JSON.stringify(rule?.Properties?.Targets).includes(machineId),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]?.[1]?.Properties?.ScheduleExpression).toBe('rate(1 day)');
    expect(rules[0]?.[1]?.Properties?.Targets?.[0]?.RetryPolicy).toEqual({ MaximumRetryAttempts: 0 });
  });

  it('alarms on breaks (the reducer failed), on executions failed, timed out or aborted, and on no run succeeding, to the alarm topic', () => {
    const alarms = resources('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm?.Properties);
    const machineId = logicalId(built.service, built.service.ledgerAudit.stateMachine);
    const breaks = alarms.find((a) => String(a?.AlarmName).endsWith('-ledger-audit-failed'));
    expect(breaks?.MetricName).toBe('Errors');
    expect(JSON.stringify(breaks?.Dimensions)).toContain(
      logicalId(built.service, built.service.ledgerAudit.function.function),
    );
    expect(breaks?.AlarmDescription).toContain('runbook (docs/operations.md) "ledger-audit-failed"');

    const executions = alarms.find((a) => String(a?.AlarmName).endsWith('-ledger-audit-execution-failed'));
    const queries = executions?.Metrics as unknown as {
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown }; Period: number };
    }[];
    // Step Functions counts a timed-out or an aborted execution apart from a failed one.
    expect(queries.find((q) => q.Expression)?.Expression).toBe(
      'FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)',
    );
    const metrics = Object.fromEntries(
      queries.filter((q) => q.MetricStat).map((q) => [q.Id, q.MetricStat?.Metric.MetricName]),
    );
    expect(metrics).toEqual({
      failed: 'ExecutionsFailed',
      timedOut: 'ExecutionsTimedOut',
      aborted: 'ExecutionsAborted',
    });
    for (const query of queries.filter((q) => q.MetricStat)) {
      expect(query.MetricStat?.Metric.Namespace).toBe('AWS/States');
      expect(JSON.stringify(query.MetricStat?.Metric.Dimensions)).toContain(machineId);
      expect(query.MetricStat?.Period).toBe(86_400);
    }
    expect(executions).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });

    // A schedule that never starts a run fails nothing: no success within a day and the run's
    // 2-hour timeout pages, and so does no datapoint at all.
    const notRun = alarms.find((a) => String(a?.AlarmName).endsWith('-ledger-audit-not-run'));
    expect(notRun).toMatchObject({
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsSucceeded',
      Statistic: 'Sum',
      Period: 26 * 3_600,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'breaching',
    });
    expect(JSON.stringify(notRun?.Dimensions)).toContain(machineId);
    for (const alarm of [breaks, executions, notRun]) {
      expect(alarm?.AlarmActions).toHaveLength(1);
      expect(alarm?.OKActions).toHaveLength(1);
    }
  });

  it("refuses an interval whose not-run alarm CloudWatch could not evaluate (over 7 days with the run's timeout)", () => {
    const stack = new Stack();
    const props = {
      stageName: 'dev',
      walletsTable: new Table(stack, 'Wallets', { partitionKey: { name: 'pk', type: AttributeType.STRING } }),
      alarmTopic: new Topic(stack, 'Alarms'),
      logRetention: RetentionDays.ONE_WEEK,
      logLevel: ApplicationLogLevel.INFO,
    };
    expect(() => new LedgerAudit(stack, 'Weekly', { ...props, every: Duration.days(7) })).toThrow(
      /every must be at most 7 days less the execution timeout/,
    );
  });

  it('grants each function one grant on the table and one on the partials, no wider than its work', () => {
    const audit = built.service.ledgerAudit;
    const bucket = logicalId(built.service, audit.partials);
    const expected: [ProjectFunction, string[], string[]][] = [
      [audit.segmentFunction, ['dynamodb:Scan'], ['s3:PutObject']],
      [audit.function, ['dynamodb:BatchGetItem', 'dynamodb:Scan'], ['s3:DeleteObject', 's3:GetObject']],
    ];
    for (const [fn, data, objects] of expected) {
      const statements = statementsOf(fn);
      const dynamodb = statements.filter((s) => actions(s).some((a) => a.startsWith('dynamodb:')));
      const s3 = statements.filter((s) => actions(s).some((a) => a.startsWith('s3:')));
      expect(dynamodb.map(actions)).toEqual([data]);
      expect(s3.map(actions)).toEqual([objects]);
      expect(JSON.stringify(s3[0]?.Resource)).toContain(bucket);
      expect(JSON.stringify(s3[0]?.Resource)).toContain(`/${PARTIALS_PREFIX}*`);
    }
    // The state machine may invoke the two functions, and nothing else of Lambda's.
    const machineRole = logicalId(built.service, audit.stateMachine.role as never);
    const invokes = resources('AWS::IAM::Policy')
      .filter(([, policy]) => JSON.stringify(policy?.Properties?.Roles).includes(machineRole))
      .flatMap(([, policy]) => policy?.Properties?.PolicyDocument?.Statement as unknown as Statement[])
      .filter((s) => actions(s).includes('lambda:InvokeFunction'));
    const invoked = JSON.stringify(invokes.map((s) => s.Resource));
    expect(invoked).toContain(logicalId(built.service, audit.segmentFunction.function));
    expect(invoked).toContain(logicalId(built.service, audit.function.function));
  });
});
