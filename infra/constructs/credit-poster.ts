import { Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  CREDIT_POSTER_FUNCTION_DIR,
  CREDIT_POSTER_STREAM,
  CREDIT_RECORD_FILTER,
} from '#infra/credit-poster-settings.ts';
import { CREDIT_POSTER_GRANT } from '#infra/worker-grants.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { ProjectFunction } from './project-function.ts';
import { streamEventSource, streamFailureQueue } from './stream-reader.ts';

export interface CreditPosterProps {
  readonly stageName: string;
  /** The wallets table, with the stream its definition in shared/dynamodb/tables.ts declares. */
  readonly walletsTable: ITable;
  readonly logRetention: RetentionDays;
  readonly logLevel: ApplicationLogLevel;
}

/**
 * The credit poster of the wallet ledger (functions/post-credits): the wallets table's stream into
 * the function through an event source mapping that only lets inserted credits through, batches
 * them, splits and retries a failing batch from the record the function names, a bounded number
 * of times, and then sends the batch's description to an encrypted failure queue. Its alarms live
 * in ServiceMonitoring; the runbook row is docs/operations.md's "The credit poster alarms".
 */
export class CreditPoster extends Construct {
  readonly function: ProjectFunction;
  /** Where a batch goes when its retries or its age run out: its shard and sequence numbers, not its records. */
  readonly failureQueue: Queue;
  readonly eventSource: DynamoEventSource;

  constructor(scope: Construct, id: string, props: CreditPosterProps) {
    super(scope, id);
    const settings = CREDIT_POSTER_STREAM;
    if (!props.walletsTable.tableStreamArn) {
      throw new Error(
        `${props.walletsTable.node.path} has no stream: shared/dynamodb/tables.ts declares one`,
      );
    }
    this.function = new ProjectFunction(this, 'Function', {
      functionDir: CREDIT_POSTER_FUNCTION_DIR,
      description:
        'Credit poster: posts the credits in transit to hot wallets, in batches, off the wallets table stream',
      environment: { [tables.wallets.envVar]: props.walletsTable.tableName, STAGE: props.stageName },
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
      timeout: Duration.seconds(settings.functionTimeoutSeconds),
    });
    this.function.grantData(props.walletsTable, CREDIT_POSTER_GRANT.actions, CREDIT_POSTER_GRANT.indexes);

    // The credits themselves stay in the table, unposted and in the `pending` index, whatever
    // happens to the queue (docs/decisions/credit-poster-stream.md).
    this.failureQueue = streamFailureQueue(
      this,
      settings,
      "This queue is itself the event source mapping's on-failure destination: nothing consumes it but an operator re-driving credits (runbook, docs/operations.md), so a dead-letter queue behind it would never receive anything.",
    );
    this.eventSource = streamEventSource(
      props.walletsTable,
      settings,
      this.failureQueue,
      CREDIT_RECORD_FILTER,
    );
    this.function.function.addEventSource(this.eventSource);

    const role = this.function.function.role;
    if (role) {
      // Same id as ProjectFunction's acknowledgement, which this one replaces with the fuller reason.
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Active X-Ray tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, and the event source mapping needs dynamodb:ListStreams to find the table stream; none of them supports resource-level permissions, so their resource must be "*". Reading the stream itself is granted on its ARN only.',
      });
    }
  }
}
