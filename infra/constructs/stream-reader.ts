/**
 * What each reader of the wallets table's stream is given (the credit poster, the event deriver):
 * an on-failure queue and an event source mapping built from its settings and filter, so that
 * the two readers differ in their settings alone (infra/credit-poster-settings.ts,
 * infra/webhook-settings.ts).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { CreditPosterStreamSettings } from '../credit-poster-settings.ts';

/**
 * The queue the mapping sends a batch's pointers to once its retries are spent, as `FailedBatches`
 * in `scope`. Stateless like the mapping that writes to it: what it holds are pointers into the
 * stream; the records stay in the stream (24 h) and their items in the table. `nobodyConsumes`
 * says, for cdk-nag, who re-drives it instead of a dead-letter queue behind it.
 */
export function streamFailureQueue(
  scope: Construct,
  settings: CreditPosterStreamSettings,
  nobodyConsumes: string,
): Queue {
  const queue = new Queue(scope, 'FailedBatches', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(settings.failureRetentionDays),
    removalPolicy: RemovalPolicy.DESTROY,
  });
  Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: nobodyConsumes });
  return queue;
}

/** The mapping of one reader: its settings, its filter, failed batches to `failureQueue`. */
export function streamEventSource(
  table: ITable,
  settings: CreditPosterStreamSettings,
  failureQueue: Queue,
  filter: unknown,
): DynamoEventSource {
  return new DynamoEventSource(table, {
    startingPosition: StartingPosition[settings.startingPosition],
    batchSize: settings.batchSize,
    maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds),
    parallelizationFactor: settings.parallelizationFactor,
    bisectBatchOnError: settings.bisectBatchOnFunctionError,
    reportBatchItemFailures: settings.reportBatchItemFailures,
    retryAttempts: settings.maxRetryAttempts,
    maxRecordAge: Duration.seconds(settings.maxRecordAgeSeconds),
    onFailure: new SqsDlq(failureQueue),
    filters: [{ pattern: JSON.stringify(filter) }],
  });
}
