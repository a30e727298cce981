import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import {
  DefinitionBody,
  DistributedMap,
  JsonPath,
  LogLevel,
  Pass,
  StateMachine,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { LEDGER_AUDIT_GRANTS } from '#infra/worker-grants.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { MAX_SEGMENTS } from '#shared/wallet/audit/partial.ts';
import { PARTIALS_BUCKET_ENV, PARTIALS_PREFIX } from '#shared/wallet/audit/partial-store.ts';
import { alarmNamePrefix } from './alarm-thresholds.ts';
import { ProjectFunction } from './project-function.ts';

/** How long an audit execution may run: the children and the reducer, retries included. */
const AUDIT_TIMEOUT = Duration.hours(2);

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
  /**
   * Scan segments, a child Lambda each: sized so that each scans a bounded share of the table in
   * well under its 15 minutes. More is not free: an account's entries lie in every segment, so its
   * tally comes to the reducer from up to this many partials (BENCHMARKS.md, "Ledger audit at
   * 100 M wallets").
   * @default 16
   */
  readonly segments?: number;
  /**
   * Children running at once: each reads ≈ 1,000 RRU/s at full speed, taken from the table's
   * on-demand throughput the API shares. @default 16
   */
  readonly maxConcurrency?: number;
}

/**
 * The ledger audit of `npm run wallet:audit -- --segments N`, run on a schedule in the stage as a
 * Step Functions state machine: a Pass state draws the run's fingerprint key and lists the segment
 * numbers, a Distributed Map runs a child Lambda per segment (Scan only; it leaves its partial in
 * the partials bucket), and the reducer Lambda (Scan and BatchGetItem; it reads and removes the
 * partials) decides. A break fails the reducer: its Errors alarm (ledger-audit-failed) is today's,
 * runbook and all (docs/operations.md, "ledger-audit-failed"); an execution that fails, times out
 * or is aborted for any other reason (a child failing past its retries) has an alarm of its own,
 * and so does a schedule under which no run succeeds (ledger-audit-not-run).
 * Why: docs/decisions/segmented-audit.md.
 */
export class LedgerAudit extends Construct {
  /** The reducer: the function that decides. */
  readonly function: ProjectFunction;
  readonly segmentFunction: ProjectFunction;
  readonly stateMachine: StateMachine;
  readonly partials: Bucket;
  /** Breaks (the reducer failed); executions that failed, timed out or were aborted; no run succeeded. */
  readonly alarm: Alarm;
  readonly executionsAlarm: Alarm;
  readonly notRunAlarm: Alarm;

  get alarms(): Alarm[] {
    return [this.alarm, this.executionsAlarm, this.notRunAlarm];
  }

  constructor(scope: Construct, id: string, props: LedgerAuditProps) {
    super(scope, id);
    const segments = props.segments ?? 16;
    if (!Number.isInteger(segments) || segments < 1 || segments > MAX_SEGMENTS) {
      throw new Error(`${this.node.path}: segments must be 1 to ${MAX_SEGMENTS}`);
    }
    const every = props.every ?? Duration.days(1);
    const notRunWindow = every.plus(AUDIT_TIMEOUT);
    // CloudWatch evaluates an alarm over at most 7 days.
    if (notRunWindow.toSeconds() > Duration.days(7).toSeconds()) {
      throw new Error(`${this.node.path}: every must be at most 7 days less the execution timeout`);
    }
    this.partials = new Bucket(this, 'Partials', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      // The reducer removes a run's partials once decided; these catch a run that never was.
      lifecycleRules: [
        { id: 'expire-partials', expiration: Duration.days(2) },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      // Scratch space: nothing in it outlives a run by more than the lifecycle's days.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.partials).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "Only the audit's own functions read or write it, each object a day's partial sums of the ledger, removed once the audit decides; its executions' history records every run.",
    });
    const environment = {
      [tables.wallets.envVar]: props.walletsTable.tableName,
      [PARTIALS_BUCKET_ENV]: this.partials.bucketName,
      STAGE: props.stageName,
    };
    const common = {
      environment,
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
      // A scan of a segment, or the reads after the scan: minutes, not an API's seconds.
      timeout: Duration.minutes(15),
    };
    this.segmentFunction = new ProjectFunction(this, 'SegmentFunction', {
      ...common,
      functionDir: 'wallet-audit-segment',
      description: 'Ledger audit child: scans one Scan segment of the wallets table, read-only',
    });
    this.segmentFunction.grantData(props.walletsTable, LEDGER_AUDIT_GRANTS.segment.actions);
    this.#grantPartials(this.segmentFunction, ['s3:PutObject']);
    this.function = new ProjectFunction(this, 'Function', {
      ...common,
      functionDir: 'wallet-audit',
      description: 'Ledger audit reducer: adds up the segments, re-reads by key and decides; read-only',
      // The tallies of every account, as the single audit held them (about 3 M wallets a GB); the
      // most a new account allows: BENCHMARKS.md, "Ledger audit at 100 M wallets", says what next.
      memorySize: 3_008,
    });
    this.function.grantData(props.walletsTable, LEDGER_AUDIT_GRANTS.reducer.actions);
    this.#grantPartials(this.function, ['s3:GetObject', 's3:DeleteObject']);

    this.stateMachine = this.#stateMachine(segments, props);
    new Rule(this, 'Schedule', {
      description: 'Runs the wallet ledger audit',
      schedule: Schedule.rate(every),
      // A failed audit is a finding, not something to run twice.
      targets: [new SfnStateMachine(this.stateMachine, { retryAttempts: 0 })],
    });
    this.alarm = this.#alarm(
      'Breaks',
      'ledger-audit-failed',
      'The scheduled ledger audit failed: a double-entry invariant is broken, or the audit could not read the table. Its reducer\'s log names every break; follow the runbook (docs/operations.md) "ledger-audit-failed".',
      this.function.function.metricErrors({ period: Duration.days(1) }),
      props,
    );
    this.executionsAlarm = this.#alarm(
      'Executions',
      'ledger-audit-execution-failed',
      'A run of the ledger audit\'s state machine failed, timed out or was aborted (a child failing past its retries, say): the books went unproven today. Its execution names the failed state; follow the runbook (docs/operations.md) "ledger-audit-execution-failed".',
      // Step Functions counts a timed-out or aborted execution apart from a failed one, and
      // publishes each only when it happens: filled, or one alone would leave the sum empty.
      new MathExpression({
        expression: 'FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)',
        usingMetrics: {
          failed: this.stateMachine.metricFailed({ period: Duration.days(1) }),
          timedOut: this.stateMachine.metricTimedOut({ period: Duration.days(1) }),
          aborted: this.stateMachine.metricAborted({ period: Duration.days(1) }),
        },
        period: Duration.days(1),
        label: 'audit executions failed, timed out or aborted',
      }),
      props,
    );
    // A schedule disabled or deleted, or runs that never start, fail nothing: only the absence of
    // a success says so. The window is one interval plus the execution's timeout, the furthest
    // apart two successful runs on time can end, so that a slow run after a quick one is no page.
    this.notRunAlarm = this.#alarm(
      'NotRun',
      'ledger-audit-not-run',
      `No run of the ledger audit succeeded in ${notRunWindow.toHumanString()} (its interval plus the execution timeout): the schedule is disabled or gone, its runs do not start, or every one failed. The books go unproven until one succeeds; follow the runbook (docs/operations.md) "ledger-audit-execution-failed".`,
      this.stateMachine.metricSucceeded({ period: notRunWindow }),
      props,
      { comparison: ComparisonOperator.LESS_THAN_THRESHOLD, treatMissingData: TreatMissingData.BREACHING },
    );
  }

  #stateMachine(segments: number, props: LedgerAuditProps): StateMachine {
    // What every child and the reducer share: the execution's name and start, a key drawn for
    // this run only (a UUID's 122 random bits), and the segment numbers 0..N-1 as the map's items.
    const plan = new Pass(this, 'Plan', {
      parameters: {
        'runId.$': '$$.Execution.Name',
        'key.$': 'States.UUID()',
        'startedAt.$': '$$.Execution.StartTime',
        segments,
        'items.$': `States.ArrayRange(0, ${segments - 1}, 1)`,
      },
    });
    const child = new LambdaInvoke(this, 'ScanSegment', {
      lambdaFunction: this.segmentFunction.function,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
    });
    // A child that fails (a throttled read past the SDK's retries, a Lambda that ran out of time)
    // is run again: it rewrites its one object, so a retry is harmless.
    child.addRetry({
      errors: ['States.ALL'],
      interval: Duration.seconds(30),
      maxAttempts: 3,
      backoffRate: 2,
    });
    const map = new DistributedMap(this, 'Segments', {
      itemsPath: '$.items',
      itemSelector: {
        'runId.$': '$.runId',
        'key.$': '$.key',
        'startedAt.$': '$.startedAt',
        'segments.$': '$.segments',
        'segment.$': '$$.Map.Item.Value',
      },
      maxConcurrency: props.maxConcurrency ?? 16,
      // The partials are in S3; the map passes on only the plan.
      resultPath: JsonPath.DISCARD,
      toleratedFailurePercentage: 0,
    });
    map.itemProcessor(child);
    const reduce = new LambdaInvoke(this, 'Reduce', {
      lambdaFunction: this.function.function,
      payloadResponseOnly: true,
      // A break is the verdict: it fails the execution, never runs again. Lambda's own service
      // errors (a throttle, a cold start that failed) are retried by default.
      retryOnServiceExceptions: true,
    });
    const logs = new LogGroup(this, 'ExecutionLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const machine = new StateMachine(this, 'StateMachine', {
      comment: 'The wallet ledger audit: a child per Scan segment, then the reducer',
      definitionBody: DefinitionBody.fromChainable(plan.next(map).next(reduce)),
      // The children and the reducer each end within 15 minutes; retries included, well inside this.
      timeout: AUDIT_TIMEOUT,
      tracingEnabled: true,
      logs: { destination: logs, level: LogLevel.ALL, includeExecutionData: false },
    });
    this.#acknowledgeMachineRole(machine);
    return machine;
  }

  /** What Step Functions' own grants to the state machine's role hold that cdk-nag flags: each is its narrowest. */
  #acknowledgeMachineRole(machine: StateMachine): void {
    const stack = Stack.of(this);
    // Resolved now: the acknowledgement's id is matched as text.
    const id = (construct: Construct) =>
      stack.resolve(stack.getLogicalId(construct.node.defaultChild as never));
    // As cdk-nag prints the ARN: pseudo parameters where the stack's environment is left to the
    // deployment, literals where a stage names its account and region (the partition follows).
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    const partition = Token.isUnresolved(stack.partition) ? '<AWS::Partition>' : stack.partition;
    const executions = `arn:${partition}:states:${region}:${account}:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"${id(machine)}"}]}]}`;
    const acknowledge = (resource: string, reason: string) =>
      Validations.of(machine.role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason });
    acknowledge(
      '*',
      "Active X-Ray tracing (xray:PutTraceSegments, PutTelemetryRecords, GetSamplingRules) and delivering the execution logs (logs:CreateLogDelivery and its kin) support no resource-level permissions; the functions and the map's own executions are granted by ARN.",
    );
    for (const fn of [this.segmentFunction, this.function]) {
      acknowledge(
        `<${id(fn.function)}.Arn>:*`,
        'The versions and aliases of this one function, which LambdaInvoke grants beside the function: invoking it, nothing else.',
      );
    }
    // Granted through a policy the map makes of its own, beside the role's: acknowledged on the audit.
    for (const suffix of ['/*:*', ':*']) {
      Validations.of(this).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${executions}${suffix}]`,
        reason:
          "The Distributed Map's child executions of this one state machine, which it starts, describes and stops: none of another.",
      });
    }
  }

  /** The function's one grant on the partials: `actions` on the objects under the prefix only. */
  #grantPartials(fn: ProjectFunction, actions: string[]): Grant {
    const grant = Grant.addToPrincipal({
      grantee: fn.function,
      actions,
      resourceArns: [this.partials.arnForObjects(`${PARTIALS_PREFIX}*`)],
    });
    const role = fn.function.role;
    if (role) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.partials.node.defaultChild as never)}.Arn>/${PARTIALS_PREFIX}*]`,
        reason:
          "A run's partials are keyed by its execution (audit-partials/<run>/<segment>.json), so the grant names the one prefix the audit writes under: objects below it only, never the bucket (no listing).",
      });
    }
    return grant;
  }

  #alarm(
    id: string,
    name: string,
    description: string,
    metric: IMetric,
    props: LedgerAuditProps,
    {
      comparison = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData = TreatMissingData.NOT_BREACHING,
    }: { comparison?: ComparisonOperator; treatMissingData?: TreatMissingData } = {},
  ): Alarm {
    const alarm = new Alarm(this, id, {
      alarmName: `${alarmNamePrefix(props.stageName)}${name}`,
      alarmDescription: description,
      metric,
      threshold: 1,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      comparisonOperator: comparison,
      treatMissingData,
    });
    const action = new SnsAction(props.alarmTopic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    return alarm;
  }
}
