import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServiceApp } from '#infra/app.ts';
import {
  CREDIT_POSTER_NAME,
  CREDIT_POSTER_STREAM,
  CREDIT_RECORD_FILTER,
} from '#infra/credit-poster-settings.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { type Json, logicalId, synthesize } from '../support/cdk.ts';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

let built: ServiceApp;
let service: Template;
let stateful: Template;

beforeAll(() => {
  ({ built, service, stateful } = synthesize());
}, 180_000);

const poster = () => built.service.creditPoster;
const resources = (type: string): [string, Json][] =>
  Object.entries(service.findResources(type)).map(([id, resource]) => [id, resource.Properties as Json]);

/** The poster's own mapping of the stream (the webhook events' deriver reads it too, with its own). */
function mapping(): Json {
  const posterId = logicalId(built.service, poster().function.function);
  const mappings = resources('AWS::Lambda::EventSourceMapping').filter(
    ([, props]) => JSON.stringify(props.FunctionName) === JSON.stringify({ Ref: posterId }),
  );
  expect(mappings).toHaveLength(1);
  return (mappings[0] as [string, Json])[1];
}

function posterStatements(): Statement[] {
  const role = poster().function.function.role;
  if (!role) throw new Error('the poster has no role');
  const roleRef = JSON.stringify([{ Ref: logicalId(built.service, role) }]);
  return resources('AWS::IAM::Policy')
    .filter(([, props]) => JSON.stringify(props.Roles) === roleRef)
    .flatMap(([, props]) => (props.PolicyDocument as { Statement: Statement[] }).Statement);
}

const walletsTableId = () => logicalId(built.stateful, built.stateful.tables.wallets);

describe('the wallets table stream', () => {
  it('has the view type shared/dynamodb/tables.ts declares, and the pending index', () => {
    expect(tables.wallets.stream).toBeDefined();
    const table = stateful.toJSON().Resources[walletsTableId()].Properties as Json;
    expect(table.StreamSpecification).toEqual({ StreamViewType: tables.wallets.stream });
    const indexes = (table.GlobalSecondaryIndexes as { IndexName: string }[]).map((i) => i.IndexName);
    expect(indexes.sort()).toEqual((tables.wallets.indexes ?? []).map((i) => i.name).sort());
  });

  it('is declared on no other table', () => {
    const other = stateful.toJSON().Resources[logicalId(built.stateful, built.stateful.tables.pets)]
      .Properties as Json;
    expect(other.StreamSpecification).toBeUndefined();
  });
});

describe('the event source mapping of the credit poster', () => {
  it("reads the wallets table's stream into the poster", () => {
    const props = mapping();
    expect(props.FunctionName).toEqual({ Ref: logicalId(built.service, poster().function.function) });
    expect(JSON.stringify(props.EventSourceArn)).toMatch(new RegExp(`${walletsTableId()}StreamArn`));
  });

  it('batches, retries, splits and gives up as the shared settings say', () => {
    const settings = CREDIT_POSTER_STREAM;
    expect(mapping()).toMatchObject({
      StartingPosition: settings.startingPosition,
      BatchSize: settings.batchSize,
      MaximumBatchingWindowInSeconds: settings.maxBatchingWindowSeconds,
      ParallelizationFactor: settings.parallelizationFactor,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: settings.maxRetryAttempts,
      MaximumRecordAgeInSeconds: settings.maxRecordAgeSeconds,
    });
    // Bounded: Lambda's default (-1) retries a failing batch until its records expire, a day.
    expect(settings.maxRetryAttempts).toBeGreaterThan(0);
    expect(settings.maxRetryAttempts).toBeLessThanOrEqual(20);
    expect(settings.maxRecordAgeSeconds).toBeLessThan(24 * 60 * 60);
  });

  it('lets only inserted credits through to the function', () => {
    const filters = (mapping().FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((f) => JSON.parse(f.Pattern))).toEqual([
      { eventName: ['INSERT'], dynamodb: { NewImage: { kind: { S: ['credit'] } } } },
    ]);
    expect(JSON.parse(JSON.stringify(CREDIT_RECORD_FILTER))).toEqual(JSON.parse(filters[0]?.Pattern ?? ''));
  });

  it('sends the batches it gives up on to an encrypted queue that keeps them for two weeks', () => {
    const queueId = logicalId(built.service, poster().failureQueue);
    expect(mapping().DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    });
    const queue = service.toJSON().Resources[queueId].Properties as Json;
    expect(queue).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: CREDIT_POSTER_STREAM.failureRetentionDays * 86_400,
    });
    // Plain-HTTP access refused.
    const policies = resources('AWS::SQS::QueuePolicy').filter(([, props]) =>
      JSON.stringify(props.Queues).includes(queueId),
    );
    expect(JSON.stringify(policies)).toMatch(/"aws:SecureTransport":"false"/);
  });
});

describe('the credit poster function', () => {
  it('runs as every function does, with a timeout for whole batches and the wallets table name', () => {
    const props = service.toJSON().Resources[logicalId(built.service, poster().function.function)]
      .Properties as Json;
    expect(props).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      MemorySize: 1024,
      Timeout: CREDIT_POSTER_STREAM.functionTimeoutSeconds,
    });
    const variables = (props.Environment as { Variables: Json }).Variables;
    expect(Object.keys(variables).sort()).toEqual([tables.wallets.envVar, 'NODE_OPTIONS', 'STAGE'].sort());
    expect(poster().node.id).toBe(CREDIT_POSTER_NAME);
  });

  it('may do exactly what posting does: consistent batch reads, transactional puts and updates, its lease, and Queries of the pending index only, on the wallets table only', () => {
    const statements = posterStatements();
    const tableStatements = statements.filter((s) =>
      JSON.stringify(s.Resource).match(new RegExp(`FnGetAtt${walletsTableId()}Arn`)),
    );
    expect(tableStatements).toHaveLength(1);
    expect([tableStatements[0]?.Action].flat().sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    // The table and its `pending` index, no other.
    const resources = JSON.stringify(tableStatements[0]?.Resource);
    expect([tableStatements[0]?.Resource].flat()).toHaveLength(2);
    expect(resources).toContain('/index/pending');
    expect(resources).not.toContain('/index/history');
  });

  it('reads the stream on its ARN, sends failures to its queue, and has no wildcard action', () => {
    const statements = posterStatements();
    const actions = statements.flatMap((s) => [s.Action].flat()).sort();
    for (const action of actions) expect(action).not.toMatch(/\*/);
    expect(actions).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'dynamodb:DescribeStream',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
      ].sort(),
    );
    const stream = statements.find((s) => [s.Action].flat().includes('dynamodb:GetRecords'));
    expect(JSON.stringify(stream?.Resource)).toMatch(new RegExp(`${walletsTableId()}StreamArn`));
    const queue = statements.find((s) => [s.Action].flat().includes('sqs:SendMessage'));
    expect(queue?.Resource).toEqual({
      'Fn::GetAtt': [logicalId(built.service, poster().failureQueue), 'Arn'],
    });
    // What AWS allows on no narrower resource only: ListStreams and X-Ray.
    const anywhere = statements.filter((s) => s.Resource === '*').flatMap((s) => [s.Action].flat());
    expect(anywhere.sort()).toEqual([
      'dynamodb:ListStreams',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
  });
});

describe('the credit poster alarms', () => {
  const alarm = (name: string): Json => {
    const found = resources('AWS::CloudWatch::Alarm').find(
      ([, props]) => props.AlarmName === `wallet-catalog-dev-${name}`,
    );
    if (!found) throw new Error(`no alarm ${name}`);
    return found[1];
  };

  it('fire when the poster is a minute behind the stream for 3 of 5 minutes', () => {
    expect(alarm('creditPoster-iterator-age')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 60_000,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: [
        { Name: 'FunctionName', Value: { Ref: logicalId(built.service, poster().function.function) } },
      ],
    });
  });

  it('fire on the first batch in the failure queue', () => {
    expect(alarm('creditPoster-failed-batches')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
      EvaluationPeriods: 1,
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [logicalId(built.service, poster().failureQueue), 'QueueName'] },
        },
      ],
    });
  });

  it('are on the dashboard with the poster, and say where the runbook is', () => {
    for (const name of ['creditPoster-iterator-age', 'creditPoster-failed-batches']) {
      expect(String(alarm(name).AlarmDescription)).toMatch(
        /runbook \(docs\/operations\.md\): "The credit poster alarms"/,
      );
      expect(alarm(name).AlarmActions).toBeDefined();
    }
    const body = JSON.stringify(
      service.toJSON().Resources[logicalId(built.service, built.service.monitoring.dashboard)],
    );
    expect(body).toMatch(/Credit poster: stream iterator age/);
    expect(body).toMatch(/IteratorAge/);
  });
});
