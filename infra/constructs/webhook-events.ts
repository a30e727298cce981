import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  EVENT_DERIVER_FUNCTION_DIR,
  EVENT_DERIVER_STREAM,
  WEBHOOK_DISPATCHER,
  WEBHOOK_DISPATCHER_FUNCTION_DIR,
} from '#infra/webhook-settings.ts';
import { EVENT_DERIVER_GRANTS, WEBHOOK_DISPATCHER_GRANT } from '#infra/worker-grants.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { METRICS_NAMESPACE, SERVICE } from '#shared/observability/telemetry.ts';
import { EVENT_SOURCE_FILTER } from '#shared/webhooks/dynamodb/ledger-facts.ts';
import { KMS_KEY_ENV } from '#shared/webhooks/secrets/keeper.ts';
import { WEBHOOK_SECRET_PURPOSE } from '#shared/webhooks/secrets/kms-key-wrapper.ts';
import { alarmNamePrefix } from './alarm-thresholds.ts';
import { ProjectFunction } from './project-function.ts';
import { streamEventSource, streamFailureQueue } from './stream-reader.ts';

export interface WebhookEventsProps {
  readonly stageName: string;
  readonly walletsTable: ITable;
  readonly webhooksTable: ITable;
  /** The KMS key the signing secrets are sealed under: the dispatcher opens them. */
  readonly secretsKey: IKey;
  /** The wallet's money settings (currency, decimals): the deriver writes exact amounts. */
  readonly walletEnvironment: Readonly<Record<string, string>>;
  readonly alarmTopic: ITopic;
  readonly logRetention: RetentionDays;
  readonly logLevel: ApplicationLogLevel;
}

/**
 * The events half of the webhooks (docs/decisions/webhooks.md): the deriver, the wallets table's
 * second and last stream reader, with a filter letting only entries, transfers and batches through
 * and an encrypted failure queue for poison records; the dispatcher, invoked every minute and
 * polling the due tasks for its minute; their alarms. Runbook: docs/operations.md, "the webhook
 * alarms" and "the webhook lag alarms".
 */
export class WebhookEvents extends Construct {
  readonly deriver: ProjectFunction;
  readonly dispatcher: ProjectFunction;
  readonly failureQueue: Queue;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: WebhookEventsProps) {
    super(scope, id);
    const settings = EVENT_DERIVER_STREAM;
    this.deriver = new ProjectFunction(this, 'Deriver', {
      functionDir: EVENT_DERIVER_FUNCTION_DIR,
      description: 'Webhook events: derives each wallet event once from the wallets table stream',
      environment: {
        ...props.walletEnvironment,
        [tables.wallets.envVar]: props.walletsTable.tableName,
        [tables.webhooks.envVar]: props.webhooksTable.tableName,
        STAGE: props.stageName,
      },
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
      timeout: Duration.seconds(settings.functionTimeoutSeconds),
    });
    this.deriver.grantData(props.walletsTable, EVENT_DERIVER_GRANTS.wallets.actions);
    // A second table: ProjectFunction holds one data grant; this one names its table alone too.
    Grant.addToPrincipal({
      grantee: this.deriver.function,
      actions: [...EVENT_DERIVER_GRANTS.webhooks.actions],
      resourceArns: [props.webhooksTable.tableArn],
    });
    this.failureQueue = streamFailureQueue(
      this,
      settings,
      "This queue is itself the deriver's on-failure destination: an operator re-drives the batches it names from the stream (runbook, docs/operations.md); a dead-letter queue behind it would never receive anything.",
    );
    this.deriver.function.addEventSource(
      streamEventSource(props.walletsTable, settings, this.failureQueue, EVENT_SOURCE_FILTER),
    );

    this.dispatcher = new ProjectFunction(this, 'Dispatcher', {
      functionDir: WEBHOOK_DISPATCHER_FUNCTION_DIR,
      description: 'Webhook dispatcher: delivers the due webhook tasks, signed, on the retry schedule',
      environment: {
        [tables.webhooks.envVar]: props.webhooksTable.tableName,
        [KMS_KEY_ENV]: props.secretsKey.keyArn,
        STAGE: props.stageName,
      },
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
      timeout: Duration.seconds(WEBHOOK_DISPATCHER.functionTimeoutSeconds),
      reservedConcurrency: WEBHOOK_DISPATCHER.concurrentInvocations,
    });
    this.dispatcher.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.seconds(WEBHOOK_DISPATCHER.maxEventAgeSeconds),
    });
    this.dispatcher.grantData(
      props.webhooksTable,
      WEBHOOK_DISPATCHER_GRANT.actions,
      WEBHOOK_DISPATCHER_GRANT.indexes,
    );
    // Opens the secrets it signs with, for that purpose only; it never seals one.
    Grant.addToPrincipal({
      grantee: this.dispatcher.function,
      actions: ['kms:Decrypt'],
      resourceArns: [props.secretsKey.keyArn],
      conditions: { StringEquals: { 'kms:EncryptionContext:purpose': WEBHOOK_SECRET_PURPOSE } },
    });
    new Rule(this, 'Schedule', {
      description: 'Runs the webhook dispatcher: each invocation polls the due deliveries for its minute',
      schedule: Schedule.rate(Duration.minutes(WEBHOOK_DISPATCHER.scheduleMinutes)),
      targets: [new LambdaFunction(this.dispatcher.function, { retryAttempts: 0 })],
    });

    for (const fn of [this.deriver, this.dispatcher]) {
      const role = fn.function.role;
      if (role) {
        Validations.of(role).acknowledge({
          id: 'AwsSolutions-IAM5[Resource::*]',
          reason:
            'Active X-Ray tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, and the event source mapping needs dynamodb:ListStreams to find the table stream; none of them supports resource-level permissions. Tables, indexes, the stream and the key are granted by ARN.',
        });
      }
    }
    this.#alarms(props);
  }

  #alarms(props: WebhookEventsProps): void {
    const emf = (metricName: string, route: string, statistic: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: SERVICE, stage: props.stageName, route },
        statistic,
        period: Duration.minutes(5),
      });
    const alarm = (
      kind: string,
      metric: Metric,
      threshold: number,
      periods: number,
      description: string,
      treatMissingData = TreatMissingData.NOT_BREACHING,
    ) => {
      const made = new Alarm(this, kind, {
        alarmName: `${alarmNamePrefix(props.stageName)}webhooks-${kind}`,
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: periods,
        datapointsToAlarm: periods,
        treatMissingData,
      });
      const action = new SnsAction(props.alarmTopic);
      made.addAlarmAction(action);
      made.addOkAction(action);
      this.alarms.push(made);
    };
    alarm(
      'delivery-failures',
      emf('WebhookFailures', 'dispatch-webhooks', 'Sum'),
      100,
      3,
      'Webhook attempts failed (100+ in each of three 5-minute periods in a row): merchants’ endpoints down or refusing. Each is retried on the schedule; see the deliveries log of the endpoints named in the dispatcher log. runbook (docs/operations.md): "the webhook alarms".',
    );
    alarm(
      'oldest-undelivered',
      emf('OldestDueTaskAgeMs', 'dispatch-webhooks', 'Maximum'),
      60_000,
      2,
      'A webhook delivery has waited past its due time for a minute or more, or the dispatcher published no lag (it did not run, or could not read the due tasks), in two 5-minute periods in a row: the dispatcher is not running, or is behind. runbook (docs/operations.md): "the webhook lag alarms".',
      // Every minute's invocation publishes the lag unless it failed to read the due tasks, so
      // silence is a dispatcher that is down: stopped, crashing, throttled or unable to read.
      TreatMissingData.BREACHING,
    );
    alarm(
      'dispatcher-errors',
      this.dispatcher.function.metricErrors({ statistic: 'Sum', period: Duration.minutes(5) }) as Metric,
      1,
      1,
      'The webhook dispatcher failed an invocation (crash, timeout, out of memory, init error): its polling stopped until the next minute\'s, and the tasks it had claimed wait for their lease to lapse. runbook (docs/operations.md): "the webhook lag alarms".',
    );
    alarm(
      'deriver-behind',
      this.deriver.function.metric('IteratorAge', {
        statistic: 'Maximum',
        period: Duration.minutes(1),
      }) as Metric,
      60_000,
      3,
      'The event deriver is a minute or more behind the wallets table stream, 3 minutes in a row: events (and their deliveries) are late. runbook (docs/operations.md): "the webhook lag alarms".',
    );
    alarm(
      'deriver-failed-batches',
      this.failureQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }) as Metric,
      1,
      1,
      'The deriver gave up on stream records (poison or too old): their events are missing until re-driven. runbook (docs/operations.md): "the webhook lag alarms".',
    );
    alarm(
      'endpoints-disabled',
      emf('WebhookEndpointsDisabled', 'dispatch-webhooks', 'Sum'),
      1,
      1,
      'An endpoint was disabled by the dispatcher (410 Gone, or failing for 5 days): its owner sees it in its status; missed events can be replayed. runbook (docs/operations.md): "the webhook alarms".',
    );
  }
}
