/**
 * Stream records as Lambda's event source mapping handles them, for the local poller
 * (./stream-poller.ts): the filter pattern, the record a function receives, the answer it gives
 * (a partial batch response), and what goes to the on-failure destination.
 */
import type { _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';

/** One line of the failure destination: what Lambda sends an on-failure destination of a stream, plus the keys. */
export interface FailedBatch {
  readonly version: '1.0';
  readonly timestamp: string;
  readonly requestContext: {
    readonly requestId: string;
    readonly condition: 'RetryAttemptsExhausted' | 'RecordAgeExceeded';
    readonly approximateInvokeCount: number;
  };
  readonly responseContext: { readonly functionError?: string };
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string;
    readonly endSequenceNumber: string;
    readonly approximateArrivalOfFirstRecord: string;
    readonly approximateArrivalOfLastRecord: string;
    readonly batchSize: number;
    readonly streamArn: string;
  };
  /** Locally only: the keys of the records, so a re-drive needs no stream read. */
  readonly keys: readonly unknown[];
}

/**
 * Whether `value` matches an event filter pattern: each key of the pattern must be in the value,
 * an array of the pattern lists the values allowed, an object goes one level deeper. The exact
 * values subset of Lambda's filter rules, which is what the credit filter uses; anything else in a
 * pattern is refused rather than misread.
 */
export function matchesFilter(pattern: unknown, value: unknown): boolean {
  if (typeof pattern !== 'object' || pattern === null) throw new Error('A filter pattern is an object');
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(pattern).every(([key, rule]) => {
    const field = (value as Record<string, unknown>)[key];
    if (Array.isArray(rule)) {
      if (rule.some((allowed) => typeof allowed === 'object' && allowed !== null)) {
        throw new Error(`Only exact values are understood in a filter pattern, not ${JSON.stringify(rule)}`);
      }
      return rule.includes(field);
    }
    return matchesFilter(rule, field);
  });
}

/** A record of the Streams API as Lambda hands it over: dates in epoch seconds, binary in base64. */
export function lambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const text = JSON.stringify(record, (_, value: unknown) =>
    value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value,
  );
  const plain = JSON.parse(text) as DynamoDBRecord;
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    ...plain,
    ...(plain.dynamodb
      ? {
          dynamodb: {
            ...plain.dynamodb,
            ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
          },
        }
      : {}),
    eventSourceARN: streamArn,
  };
}

export const sequenceOf = (record: DynamoDBRecord): string => record.dynamodb?.SequenceNumber ?? '';

/**
 * Where a batch has to be retried from, by the function's answer: `undefined` when all of it is
 * done, else the index of the lowest failed record (0 when the answer names one not in the batch).
 */
export function failedFrom(records: readonly DynamoDBRecord[], answer: unknown): number | undefined {
  const failures = (answer as Partial<DynamoDBBatchResponse> | null | undefined)?.batchItemFailures;
  if (!Array.isArray(failures) || failures.length === 0) return undefined;
  let lowest: number | undefined;
  for (const failure of failures) {
    const index = records.findIndex((record) => sequenceOf(record) === failure?.itemIdentifier);
    if (index < 0) return 0;
    lowest = lowest === undefined ? index : Math.min(lowest, index);
  }
  return lowest;
}
