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
import { tables } from '#shared/dynamodb/tables.ts';
import { alarmNamePrefix } from './alarm-thresholds.ts';
import { ProjectFunction } from './project-function.ts';

export interface LedgerAuditProps {
  readonly stageName: string;
  readonly walletsTable: ITable;
  readonly alarmTopic: ITopic;
  readonly logRetention: RetentionDays;
  readonly logLevel: ApplicationLogLevel;
  /**
   * A full scan reads every item (its cost per wallet: docs/decisions/double-entry-ledger.md): daily
   * by default.
   * @default one day
   */
  readonly every?: Duration;
}

/**
 * The ledger audit of `npm run wallet:audit`, run on a schedule in the stage: a function (read-
 * only: Scan and BatchGetItem on the wallets table, nothing else) that EventBridge invokes, and
 * an alarm on its errors, which a break (or a table it cannot read) is. Runbook: docs/operations.md,
 * "The ledger audit alarm".
 */
export class LedgerAudit extends Construct {
  readonly function: ProjectFunction;
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: LedgerAuditProps) {
    super(scope, id);
    this.function = new ProjectFunction(this, 'Function', {
      functionDir: 'wallet-audit',
      description: 'Scheduled audit of the wallet ledger: every double-entry invariant, read-only',
      environment: {
        [tables.wallets.envVar]: props.walletsTable.tableName,
        AUDIT_SEGMENTS: '8',
        STAGE: props.stageName,
      },
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
      // A scan of the whole table: minutes for millions of wallets, not an API's seconds.
      timeout: Duration.minutes(15),
    });
    this.function.grantData(props.walletsTable, ['dynamodb:Scan', 'dynamodb:BatchGetItem']);
    new Rule(this, 'Schedule', {
      description: 'Runs the wallet ledger audit',
      schedule: Schedule.rate(props.every ?? Duration.days(1)),
      // A failed audit is a finding, not something to run twice.
      targets: [new LambdaFunction(this.function.function, { retryAttempts: 0 })],
    });
    this.alarm = new Alarm(this, 'Breaks', {
      alarmName: `${alarmNamePrefix(props.stageName)}ledger-audit-failed`,
      alarmDescription:
        'The scheduled ledger audit failed: a double-entry invariant is broken, or the audit could not read the table. Its log names every break; follow the runbook (docs/operations.md) "The ledger audit alarm".',
      metric: this.function.function.metricErrors({ period: Duration.days(1) }),
      threshold: 1,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(props.alarmTopic);
    this.alarm.addAlarmAction(action);
    this.alarm.addOkAction(action);
  }
}
