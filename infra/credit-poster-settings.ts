/**
 * How the credit poster reads the wallets table's stream: the ONE place for the settings the
 * deployed event source mapping (infra/constructs/credit-poster.ts) and the local stream poller of
 * `npm start` (infra/local/stream-poller.ts) both use, so that the local stack batches, filters,
 * retries and gives up as the deployed one does. No CDK import: the local stack loads it too.
 * Why each value: docs/decisions/credit-poster-stream.md.
 */

/** The construct id of the poster in the service stack: the name `npm run invoke` and the bundled mode find it by. */
export const CREDIT_POSTER_NAME = 'CreditPoster';

/** The functions directory of the poster. */
export const CREDIT_POSTER_FUNCTION_DIR = 'post-credits';

/**
 * Which stream records reach the poster: inserted items whose `kind` is `credit` (the credits in
 * transit the payer's transaction writes). A Lambda event filter pattern (only exact values here,
 * which is all the local poller's matcher knows); records it drops are not billed invocations.
 */
export const CREDIT_RECORD_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { kind: { S: ['credit'] } } },
} as const;

export const CREDIT_POSTER_STREAM = {
  /** Where a new mapping starts: the oldest record kept, so a mapping made again misses no credit. */
  startingPosition: 'TRIM_HORIZON',
  /** The most records one invocation takes. */
  batchSize: 1_000,
  /**
   * How long records are gathered before an invocation beyond one poll: none, so a batch is what
   * arrived since the last poll (a quarter of a second), and a merchant sees its money within about
   * half a second of the payment's 200 (docs/decisions/credit-poster-stream.md).
   */
  maxBatchingWindowSeconds: 0,
  /** Concurrent batches per shard: one, as postings to one wallet are serialized by its item anyway. */
  parallelizationFactor: 1,
  /** A failed batch is split in two and retried, until the failing record stands alone. */
  bisectBatchOnFunctionError: true,
  /** The function names the first record it could not post; the batch is retried from there. */
  reportBatchItemFailures: true,
  /** Retries of a failing batch before its records go to the failure destination. */
  maxRetryAttempts: 10,
  /** Records older than this go to the failure destination instead of the function. */
  maxRecordAgeSeconds: 6 * 60 * 60,
  /** The poster's timeout: postings of a whole batch, each retried within its own deadline. */
  functionTimeoutSeconds: 60,
  /** How long the failure queue keeps what it is sent (SQS's maximum). */
  failureRetentionDays: 14,
  /** How often the pollers read each shard: Lambda polls about four times a second. */
  pollIntervalMs: 250,
} as const;

export type CreditPosterStreamSettings = {
  -readonly [K in keyof typeof CREDIT_POSTER_STREAM]: (typeof CREDIT_POSTER_STREAM)[K] extends number
    ? number
    : (typeof CREDIT_POSTER_STREAM)[K];
};
