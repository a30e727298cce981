/**
 * The local stand-in for a Lambda event source mapping on a DynamoDB stream: what delivers the
 * wallets table's stream to the credit poster under `npm start`, with the deployed mapping's
 * settings (infra/credit-poster-settings.ts). It reads DynamoDB Local's Streams API: every shard,
 * a parent before its children (DynamoDB Local opens new shards over time and closes old ones),
 * each shard polled on its own and delivered one batch at a time, in order. Like Lambda it
 * - drops the records the filter pattern rejects before batching (they are never delivered);
 * - gathers records until the batch size or the batching window;
 * - splits a batch whose invocation failed in two (bisect), without counting that as a retry;
 * - reads a partial batch response: the batch is done up to the lowest failed sequence number,
 *   and retried from there (an identifier not in the batch fails it whole);
 * - retries a batch a bounded number of times, and gives up on records older than the maximum
 *   age: either way it sends the batch's description to the on-failure destination (here a
 *   JSON-lines file, plus a log line) and goes on with the shard;
 * - delivers at least once: a batch is handed over again after a failure, and nothing stops two
 *   pollers from reading the same stream. The poster makes that exactly once.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import {
  CREDIT_POSTER_STREAM,
  CREDIT_RECORD_FILTER,
  type CreditPosterStreamSettings,
} from '#infra/credit-poster-settings.ts';
import { localClient, localClientConfig } from './dynamodb-local.ts';
import { type FailedBatch, failedFrom, lambdaRecord, matchesFilter, sequenceOf } from './stream-records.ts';

/** Runs the function for one batch: its answer, or a rejection for a function error. */
export type StreamInvoke = (event: DynamoDBStreamEvent) => Promise<unknown>;

export interface StreamPollerOptions {
  /** DynamoDB Local's endpoint: it serves the Streams API there too. */
  readonly endpoint: string;
  readonly tableName: string;
  readonly invoke: StreamInvoke;
  /** The on-failure destination: one JSON line per batch given up on. */
  readonly failureFile: string;
  /** Overrides of the deployed settings (tests shorten the window and the retries). */
  readonly settings?: Partial<CreditPosterStreamSettings>;
  /** The event filter pattern; the deployed mapping's by default. */
  readonly filter?: unknown;
  /** Where its log lines go; stderr by default. */
  readonly log?: (line: string) => void;
}

export interface StreamPollerStats {
  readonly invocations: number;
  /** Records handed to the function, retries and duplicates included. */
  readonly recordsDelivered: number;
  readonly recordsFiltered: number;
  readonly batchesFailed: number;
}

export interface StreamPoller {
  readonly streamArn: string;
  stats(): StreamPollerStats;
  /** Stops reading; resolves once the batches in flight are done. */
  stop(): Promise<void>;
}

/** The stream ARN of a table, or a clear error for a table without one. */
async function streamArnOf(client: DynamoDBClient, tableName: string): Promise<string> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const arn = Table?.LatestStreamArn;
  if (!arn || !Table?.StreamSpecification?.StreamEnabled) {
    throw new Error(`${tableName} has no stream: shared/dynamodb/tables.ts declares one`);
  }
  return arn;
}

/** Starts polling the table's stream; resolves once the stream is found. */
export async function startStreamPoller(options: StreamPollerOptions): Promise<StreamPoller> {
  const settings: CreditPosterStreamSettings = { ...CREDIT_POSTER_STREAM, ...options.settings };
  const filter = options.filter ?? CREDIT_RECORD_FILTER;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const tables = localClient(options.endpoint);
  let streamArn: string;
  try {
    streamArn = await streamArnOf(tables, options.tableName);
  } finally {
    tables.destroy();
  }
  const streams = new DynamoDBStreamsClient(localClientConfig(options.endpoint));
  const stats = { invocations: 0, recordsDelivered: 0, recordsFiltered: 0, batchesFailed: 0 };
  const shardsDone = new Set<string>();
  const shardsStarted = new Set<string>();
  const workers: Promise<void>[] = [];
  let stopped = false;
  const stopSignal = new AbortController();
  const pause = (ms: number) => sleep(ms, undefined, { signal: stopSignal.signal }).catch(() => undefined);

  /** Every shard of the stream, following DescribeStream's pages. */
  async function describeShards(): Promise<Shard[]> {
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
      );
      shards.push(...(StreamDescription?.Shards ?? []));
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return shards;
  }

  async function iteratorFor(
    shardId: string,
    position: { after: string } | 'TRIM_HORIZON' | 'LATEST',
  ): Promise<string | undefined> {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(typeof position === 'string'
          ? { ShardIteratorType: position }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: position.after }),
      }),
    );
    return ShardIterator;
  }

  /** Hands a batch to the failure destination, and says so. */
  async function giveUp(
    shardId: string,
    records: readonly DynamoDBRecord[],
    condition: FailedBatch['requestContext']['condition'],
    invokeCount: number,
    functionError: string | undefined,
  ): Promise<void> {
    stats.batchesFailed++;
    const first = records[0];
    const last = records[records.length - 1];
    const arrival = (record: DynamoDBRecord | undefined) =>
      new Date((record?.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000).toISOString();
    const line: FailedBatch = {
      version: '1.0',
      timestamp: new Date().toISOString(),
      requestContext: { requestId: randomUUID(), condition, approximateInvokeCount: invokeCount },
      responseContext: functionError === undefined ? {} : { functionError },
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: first ? sequenceOf(first) : '',
        endSequenceNumber: last ? sequenceOf(last) : '',
        approximateArrivalOfFirstRecord: arrival(first),
        approximateArrivalOfLastRecord: arrival(last),
        batchSize: records.length,
        streamArn,
      },
      keys: records.map((record) => record.dynamodb?.Keys),
    };
    await mkdir(dirname(options.failureFile), { recursive: true });
    await appendFile(options.failureFile, `${JSON.stringify(line)}\n`);
    log(
      `stream poller: gave up on ${records.length} record(s) of shard ${shardId} (${condition} after ${invokeCount} invocation(s)); written to ${options.failureFile}`,
    );
  }

  /** Invokes the function on `records` until they are done, split, or given up on. */
  async function deliver(shardId: string, batch: readonly DynamoDBRecord[], retries = 0): Promise<void> {
    let records = batch;
    let attempt = retries;
    let invocations = 0;
    while (records.length > 0) {
      const oldest = records[0]?.dynamodb?.ApproximateCreationDateTime ?? Number.POSITIVE_INFINITY;
      if (Date.now() / 1000 - oldest > settings.maxRecordAgeSeconds) {
        await giveUp(shardId, records, 'RecordAgeExceeded', invocations, undefined);
        return;
      }
      stats.invocations++;
      stats.recordsDelivered += records.length;
      invocations++;
      let from: number | undefined;
      let functionError: string | undefined;
      try {
        from = failedFrom(records, await options.invoke({ Records: [...records] }));
      } catch (error) {
        functionError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        from = 0;
      }
      if (from === undefined) return;
      if (functionError !== undefined && settings.bisectBatchOnFunctionError && records.length > 1) {
        const half = Math.ceil(records.length / 2);
        await deliver(shardId, records.slice(0, half), attempt);
        await deliver(shardId, records.slice(half), attempt);
        return;
      }
      records = records.slice(from);
      attempt++;
      if (attempt > settings.maxRetryAttempts) {
        await giveUp(
          shardId,
          records,
          'RetryAttemptsExhausted',
          invocations,
          functionError ?? 'PartialBatchFailure',
        );
        return;
      }
      if (stopped) return;
      // Lambda backs off between retries too; a short pause keeps a poison record from spinning.
      await pause(Math.min(settings.pollIntervalMs * attempt, 2_000));
    }
  }

  /** Reads one shard to its end (a closed shard) or until stopped, one batch in flight at a time. */
  async function readShard(
    shardId: string,
    position: 'TRIM_HORIZON' | 'LATEST',
    positioned: () => void,
  ): Promise<void> {
    let iterator = await iteratorFor(shardId, position);
    positioned();
    let lastRead: string | undefined;
    let buffer: DynamoDBRecord[] = [];
    let windowOpenedAt = 0;
    let lastPolledAt = 0;
    while (!stopped) {
      if (iterator !== undefined && buffer.length < settings.batchSize) {
        // As Lambda does: one read per shard per settings.pollIntervalMs, however many records wait.
        await pause(Math.max(0, lastPolledAt + settings.pollIntervalMs - Date.now()));
        if (stopped) return;
        lastPolledAt = Date.now();
        try {
          const { Records, NextShardIterator } = await streams.send(
            new GetRecordsCommand({
              ShardIterator: iterator,
              Limit: Math.min(1_000, settings.batchSize - buffer.length),
            }),
          );
          iterator = NextShardIterator;
          for (const record of Records ?? []) {
            lastRead = record.dynamodb?.SequenceNumber ?? lastRead;
            const converted = lambdaRecord(record, streamArn);
            if (!matchesFilter(filter, converted)) {
              stats.recordsFiltered++;
              continue;
            }
            if (buffer.length === 0) windowOpenedAt = Date.now();
            buffer.push(converted);
          }
        } catch (error) {
          if (!(error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException)) {
            throw error;
          }
          iterator = await iteratorFor(
            shardId,
            lastRead === undefined ? 'TRIM_HORIZON' : { after: lastRead },
          );
          continue;
        }
      }
      const closed = iterator === undefined;
      const windowOver = Date.now() - windowOpenedAt >= settings.maxBatchingWindowSeconds * 1000;
      if (buffer.length > 0 && (buffer.length >= settings.batchSize || closed || windowOver)) {
        const batch = buffer.slice(0, settings.batchSize);
        buffer = buffer.slice(settings.batchSize);
        windowOpenedAt = Date.now();
        await deliver(shardId, batch);
        continue;
      }
      if (closed) return;
    }
  }

  /** Starts reading a shard; resolves once it has its position (or failed to get one). */
  function startShard(shard: Shard, position: 'TRIM_HORIZON' | 'LATEST'): Promise<void> {
    const shardId = shard.ShardId;
    if (!shardId || shardsStarted.has(shardId)) return Promise.resolve();
    shardsStarted.add(shardId);
    const positioned = Promise.withResolvers<void>();
    workers.push(
      readShard(shardId, position, positioned.resolve)
        .finally(positioned.resolve)
        .then(() => {
          if (!stopped) shardsDone.add(shardId);
        })
        .catch((error: unknown) => {
          // The next discovery starts it again from TRIM_HORIZON (its position died with readShard),
          // so its records already delivered are delivered again: at least once, as Lambda allows.
          shardsStarted.delete(shardId);
          if (!stopped) log(`stream poller: shard ${shardId} failed: ${(error as Error).message}`);
        }),
    );
    return positioned.promise;
  }

  /**
   * Starts every shard whose parent is read to its end (or gone from the stream); the first time,
   * resolves once each has its position (later, one shard slow to get it holds up no other's
   * discovery; review helper-37).
   */
  async function discover(first: boolean): Promise<void> {
    const shards = await describeShards();
    const listed = new Set(shards.map((shard) => shard.ShardId));
    const started: Promise<void>[] = [];
    for (const shard of shards) {
      const parent = shard.ParentShardId;
      const parentPending = parent !== undefined && listed.has(parent) && !shardsDone.has(parent);
      if (parentPending) continue;
      // Children of a shard read here start at their beginning, whatever the mapping's position.
      started.push(startShard(shard, first ? settings.startingPosition : 'TRIM_HORIZON'));
    }
    if (first) await Promise.all(started);
  }

  // Started once every shard has its position: as first built, it returned before, and records
  // written meanwhile were before LATEST, never read (test/integration/credit-poster-stream.test.ts).
  await discover(true);
  const discovery = (async () => {
    while (!stopped) {
      await pause(settings.pollIntervalMs * 4);
      if (stopped) break;
      await discover(false).catch((error: unknown) => {
        if (!stopped) log(`stream poller: cannot describe ${streamArn}: ${(error as Error).message}`);
      });
    }
  })();

  let stopping: Promise<void> | undefined;
  return {
    streamArn,
    stats: () => ({ ...stats }),
    stop() {
      stopping ??= (async () => {
        stopped = true;
        stopSignal.abort();
        await discovery;
        await Promise.allSettled(workers);
        streams.destroy();
      })();
      return stopping;
    },
  };
}
