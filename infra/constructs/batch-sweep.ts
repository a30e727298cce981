import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { BATCH_SWEEP_GRANT } from '#infra/worker-grants.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { SWEEP_EVERY_MS } from '#shared/wallet/hot-wallet/sweep-batches.ts';
import { alarmNamePrefix } from './alarm-thresholds.ts';
import { ProjectFunction } from './project-function.ts';

export interface BatchSweepProps {
  readonly stageName: string;
  readonly walletsTable: ITable;
  readonly alarmTopic: ITopic;
  readonly logRetention: RetentionDays;
  readonly logLevel: ApplicationLogLevel;
}

/**
 * The sweep of batches posted and not completed (functions/sweep-batches): EventBridge invokes it
 * every SWEEP_EVERY_MS, and it completes the batches whose poster stopped between a posting and its
 * completion (shared/wallet/hot-wallet/sweep-batches.ts). A run that fails is not retried: the
 * next one comes within minutes; one that fails pages (`batchSweep-errors`).
 */
export class BatchSweep extends Construct {
  readonly function: ProjectFunction;
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: BatchSweepProps) {
    super(scope, id);
    this.function = new ProjectFunction(this, 'Function', {
      functionDir: 'sweep-batches',
      description: 'Completes the hot-wallet credit batches posted and not completed (their poster stopped)',
      environment: { [tables.wallets.envVar]: props.walletsTable.tableName, STAGE: props.stageName },
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
      // At most 800 batches of one transaction each, four at a time, each within 20 s.
      timeout: Duration.minutes(1),
    });
    this.function.grantData(props.walletsTable, BATCH_SWEEP_GRANT.actions, BATCH_SWEEP_GRANT.indexes);
    new Rule(this, 'Schedule', {
      description: 'Completes credit batches posted and not completed',
      schedule: Schedule.rate(Duration.minutes(SWEEP_EVERY_MS / 60_000)),
      targets: [new LambdaFunction(this.function.function, { retryAttempts: 0 })],
    });
    // A sweep that crashes or times out every run leaves posted batches uncompleted until the
    // daily audit names them; its SweepFailures metric is only written by a run that ends.
    this.alarm = new Alarm(this, 'Errors', {
      alarmName: `${alarmNamePrefix(props.stageName)}batchSweep-errors`,
      alarmDescription:
        'The batch sweep failed a run (crash, timeout, out of memory, init error): credit batches posted and not completed stay so until a run succeeds. runbook (docs/operations.md): "batchSweep-errors".',
      metric: this.function.function.metricErrors({ statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(props.alarmTopic);
    this.alarm.addAlarmAction(action);
    this.alarm.addOkAction(action);
  }
}
