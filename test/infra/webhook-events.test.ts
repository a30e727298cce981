import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServiceApp } from '#infra/app.ts';
import { EVENT_DERIVER_STREAM, WEBHOOK_DISPATCHER } from '#infra/webhook-settings.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { DEFAULT_DISPATCHER_SETTINGS } from '#shared/webhooks/dispatch/dispatcher.ts';
import { DUE_INDEX, EVENTS_INDEX } from '#shared/webhooks/dynamodb/event-keys.ts';
import { EVENT_SOURCE_FILTER } from '#shared/webhooks/dynamodb/ledger-facts.ts';
import { KMS_KEY_ENV } from '#shared/webhooks/secrets/keeper.ts';
import { WEBHOOK_SECRET_PURPOSE } from '#shared/webhooks/secrets/kms-key-wrapper.ts';
import { type Json, logicalId, synthesize } from '../support/cdk.ts';

/*
 * The webhook events as deployed (infra/constructs/webhook-events.ts): the deriver on the wallets
 * table's stream, the dispatcher on its schedule, what each may do, and the alarms that page.
 */

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

let built: ServiceApp;
let service: Template;

beforeAll(() => {
  ({ built, service } = synthesize());
}, 180_000);

const events = () => built.service.webhookEvents;
const resources = (type: string): [string, Json][] =>
  Object.entries(service.findResources(type)).map(([id, resource]) => [id, resource.Properties as Json]);
const propertiesOf = (id: string): Json => service.toJSON().Resources[id].Properties as Json;
const walletsTableId = () => logicalId(built.stateful, built.stateful.tables.wallets);
const webhooksTableId = () => logicalId(built.stateful, built.stateful.tables.webhooks);

function statementsOf(fn: { function: { role?: unknown } }): Statement[] {
  const role = fn.function.role;
  if (!role) throw new Error('the function has no role');
  const roleRef = JSON.stringify([{ Ref: logicalId(built.service, role as never) }]);
  return resources('AWS::IAM::Policy')
    .filter(([, props]) => JSON.stringify(props.Roles) === roleRef)
    .flatMap(([, props]) => (props.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actionsOn = (statements: Statement[], tableId: string) =>
  statements
    .filter(
      (s) => JSON.stringify(s.Resource).includes(tableId) && !JSON.stringify(s.Resource).includes('Stream'),
    )
    .flatMap((s) => [s.Action].flat())
    .sort();

describe('the event deriver', () => {
  function mapping(): Json {
    const deriverId = logicalId(built.service, events().deriver.function);
    const mappings = resources('AWS::Lambda::EventSourceMapping').filter(
      ([, props]) => JSON.stringify(props.FunctionName) === JSON.stringify({ Ref: deriverId }),
    );
    expect(mappings).toHaveLength(1);
    return (mappings[0] as [string, Json])[1];
  }

  it("reads the wallets table's stream with the shared settings, and only the records events come from", () => {
    const settings = EVENT_DERIVER_STREAM;
    const props = mapping();
    expect(JSON.stringify(props.EventSourceArn)).toMatch(new RegExp(`${walletsTableId()}StreamArn`));
    expect(props).toMatchObject({
      StartingPosition: settings.startingPosition,
      BatchSize: settings.batchSize,
      MaximumBatchingWindowInSeconds: settings.maxBatchingWindowSeconds,
      ParallelizationFactor: settings.parallelizationFactor,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: settings.maxRetryAttempts,
      MaximumRecordAgeInSeconds: settings.maxRecordAgeSeconds,
    });
    const filters = (props.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((f) => JSON.parse(f.Pattern))).toEqual([
      JSON.parse(JSON.stringify(EVENT_SOURCE_FILTER)),
    ]);
  });

  it('sends the records it gives up on to an encrypted, TLS-only queue of its own', () => {
    const queueId = logicalId(built.service, events().failureQueue);
    expect(mapping().DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    });
    expect(propertiesOf(queueId)).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: EVENT_DERIVER_STREAM.failureRetentionDays * 86_400,
    });
    const policies = resources('AWS::SQS::QueuePolicy').filter(([, props]) =>
      JSON.stringify(props.Queues).includes(queueId),
    );
    expect(JSON.stringify(policies)).toMatch(/"aws:SecureTransport":"false"/);
    // Not the credit poster's queue: a poison record of one reader names itself.
    expect(queueId).not.toBe(logicalId(built.service, built.service.creditPoster.failureQueue));
  });

  it('may read transfers from the wallets table and write events to the webhooks table, nothing more', () => {
    const statements = statementsOf(events().deriver);
    expect(actionsOn(statements, walletsTableId())).toEqual(['dynamodb:BatchGetItem']);
    expect(actionsOn(statements, webhooksTableId())).toEqual(['dynamodb:BatchGetItem', 'dynamodb:PutItem']);
    const actions = statements.flatMap((s) => [s.Action].flat());
    for (const action of actions) expect(action).not.toMatch(/\*/);
    // No index, no key, no delete: events are written once and expire by TTL.
    expect(JSON.stringify(statements)).not.toContain('/index/');
    expect(actions.filter((a) => a.startsWith('kms:') || a === 'dynamodb:DeleteItem')).toEqual([]);
    const variables = (
      propertiesOf(logicalId(built.service, events().deriver.function)).Environment as {
        Variables: Json;
      }
    ).Variables;
    expect(variables).toHaveProperty(tables.wallets.envVar);
    expect(variables).toHaveProperty(tables.webhooks.envVar);
    expect(variables).not.toHaveProperty(KMS_KEY_ENV);
  });
});

describe('the webhook dispatcher', () => {
  const dispatcherId = () => logicalId(built.service, events().dispatcher.function);

  it('is invoked on its schedule, once per tick, with a timeout that lets its last attempts end', () => {
    const rules = resources('AWS::Events::Rule').filter(([, props]) =>
      JSON.stringify(props.Targets).includes(dispatcherId()),
    );
    expect(rules).toHaveLength(1);
    const [, rule] = rules[0] as [string, Json];
    const minutes = WEBHOOK_DISPATCHER.scheduleMinutes;
    expect(rule.ScheduleExpression).toBe(`rate(${minutes} minute${minutes === 1 ? '' : 's'})`);
    expect(rule.Targets).toEqual([expect.objectContaining({ RetryPolicy: { MaximumRetryAttempts: 0 } })]);
    const timeout = propertiesOf(dispatcherId()).Timeout as number;
    expect(timeout).toBe(WEBHOOK_DISPATCHER.functionTimeoutSeconds);
    // Past the tick and one attempt's 15 s: an invocation ends its attempts before Lambda ends it.
    expect(timeout).toBeGreaterThan(minutes * 60 + 15);
  });

  it('runs at most two at once and never retries an invocation, so an endpoint has at most 8 attempts in flight', () => {
    const props = propertiesOf(dispatcherId());
    expect(props.ReservedConcurrentExecutions).toBe(WEBHOOK_DISPATCHER.concurrentInvocations);
    // Every invocation that may still run when the next tick comes has its place: no tick waits.
    expect(WEBHOOK_DISPATCHER.concurrentInvocations).toBe(
      Math.ceil(WEBHOOK_DISPATCHER.functionTimeoutSeconds / (WEBHOOK_DISPATCHER.scheduleMinutes * 60)),
    );
    const invokeConfigs = resources('AWS::Lambda::EventInvokeConfig').filter(([, config]) =>
      JSON.stringify(config.FunctionName).includes(dispatcherId()),
    );
    expect(invokeConfigs.map(([, config]) => config.MaximumRetryAttempts)).toEqual([0]);
    // A throttled tick is dropped once the next is due, not re-queued for Lambda's default 6 hours.
    expect(invokeConfigs.map(([, config]) => config.MaximumEventAgeInSeconds)).toEqual([
      WEBHOOK_DISPATCHER.maxEventAgeSeconds,
    ]);
    expect(WEBHOOK_DISPATCHER.maxEventAgeSeconds).toBeGreaterThanOrEqual(60);
    expect(WEBHOOK_DISPATCHER.maxEventAgeSeconds).toBeLessThanOrEqual(
      WEBHOOK_DISPATCHER.scheduleMinutes * 60,
    );
    expect(
      WEBHOOK_DISPATCHER.concurrentInvocations * DEFAULT_DISPATCHER_SETTINGS.perEndpoint,
    ).toBeLessThanOrEqual(8);
  });

  it('may work the due and events indexes of the webhooks table, and only open secrets sealed for signing', () => {
    const statements = statementsOf(events().dispatcher);
    expect(actionsOn(statements, webhooksTableId())).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(actionsOn(statements, walletsTableId())).toEqual([]);
    const data = statements.find((s) => [s.Action].flat().includes('dynamodb:Query'));
    const indexes = [data?.Resource]
      .flat()
      .map((r) => JSON.stringify(r))
      .filter((r) => r.includes('/index/'));
    expect(indexes.map((r) => /\/index\/([\w-]+)/.exec(r)?.[1]).sort()).toEqual(
      [DUE_INDEX, EVENTS_INDEX].sort(),
    );
    const kms = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('kms:')));
    expect(kms).toHaveLength(1);
    expect(kms[0]).toMatchObject({
      Effect: 'Allow',
      Action: 'kms:Decrypt',
      Condition: { StringEquals: { 'kms:EncryptionContext:purpose': WEBHOOK_SECRET_PURPOSE } },
    });
    expect(JSON.stringify(kms[0]?.Resource)).toContain('WebhookSecretsKey');
    for (const action of statements.flatMap((s) => [s.Action].flat())) expect(action).not.toMatch(/\*/);
    const variables = (propertiesOf(dispatcherId()).Environment as { Variables: Json }).Variables;
    expect(variables).toHaveProperty(KMS_KEY_ENV);
    expect(variables).not.toHaveProperty(tables.wallets.envVar);
  });
});

describe('the webhook alarms', () => {
  it('are six, each named for the stage, sent to the alarm topic when they fire and when they clear', () => {
    const ids = events().alarms.map((alarm) => logicalId(built.service, alarm));
    const names = ids.map((id) => propertiesOf(id).AlarmName);
    expect(names.sort()).toEqual(
      [
        'delivery-failures',
        'oldest-undelivered',
        'deriver-behind',
        'deriver-failed-batches',
        'endpoints-disabled',
        'dispatcher-errors',
      ]
        .map((kind) => `wallet-catalog-dev-webhooks-${kind}`)
        .sort(),
    );
    for (const id of ids) {
      const props = propertiesOf(id);
      expect(props.AlarmActions).toHaveLength(1);
      expect(props.OKActions).toEqual(props.AlarmActions);
      // The lag is published every minute by a dispatcher that runs and reads: silence is it down.
      expect(props.TreatMissingData, String(props.AlarmName)).toBe(
        props.AlarmName === 'wallet-catalog-dev-webhooks-oldest-undelivered' ? 'breaching' : 'notBreaching',
      );
    }
  });

  it('page on the first failed dispatcher invocation: a crash, timeout or init error publishes no lag', () => {
    const props = resources('AWS::CloudWatch::Alarm').find(
      ([, alarm]) => alarm.AlarmName === 'wallet-catalog-dev-webhooks-dispatcher-errors',
    )?.[1] as Json;
    expect(props).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [
        { Name: 'FunctionName', Value: { Ref: logicalId(built.service, events().dispatcher.function) } },
      ],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('page when the oldest due delivery has waited a minute, and when the deriver is a minute behind', () => {
    const byName = (kind: string) =>
      resources('AWS::CloudWatch::Alarm').find(
        ([, props]) => props.AlarmName === `wallet-catalog-dev-webhooks-${kind}`,
      )?.[1] as Json;
    expect(byName('oldest-undelivered')).toMatchObject({
      MetricName: 'OldestDueTaskAgeMs',
      Statistic: 'Maximum',
      Threshold: 60_000,
    });
    expect(byName('deriver-behind')).toMatchObject({ MetricName: 'IteratorAge', Threshold: 60_000 });
    expect(byName('deriver-failed-batches')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
      EvaluationPeriods: 1,
    });
  });
});
