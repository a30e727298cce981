import { TemporarilyUnavailableError } from '../errors.ts';
import { addMetric } from '../observability/telemetry.ts';
import { ANSWER_MARGIN_MS, requestDeadline } from '../request-deadline.ts';
import { REQUEST_TIMEOUT_MS } from './client.ts';

/** How often and how patiently to retry a DynamoDB call that failed for a passing reason. */
export interface RetryPolicy {
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Three tries with full jitter: contention on one wallet clears in milliseconds. The SDK is set to
 * one attempt, so one `withRetries` call sends at most `attempts` requests; a movement that is
 * refused reads and commits again as a whole, each call with its own tries
 * (shared/wallet/model/movement-retry.ts).
 */
export const defaultRetryPolicy: RetryPolicy = { attempts: 3, baseDelayMs: 25, maxDelayMs: 250 };

/**
 * The longest one `withRetries` call can take when every attempt runs into the request timeout:
 * each attempt's request timeout and the longest backoff between attempts. It must stay below the
 * function's timeout (`ProjectFunction.TIMEOUT`, or the route's `timeoutSeconds`), so that a
 * stalled DynamoDB ends in our 503 with Retry-After, never in Lambda's timeout or API Gateway's
 * 29 s 504.
 */
export const worstCaseCallMs = (policy: RetryPolicy = defaultRetryPolicy): number =>
  policy.attempts * REQUEST_TIMEOUT_MS + (policy.attempts - 1) * policy.maxDelayMs;

/**
 * A batch read or write DynamoDB answered in part: under throttling it leaves keys (items)
 * unprocessed rather than failing. Retried as throttling is, with backoff and within the same attempts.
 */
export class UnprocessedKeysError extends Error {
  override readonly name = 'UnprocessedKeysError';
}

const RETRYABLE_NAMES = new Set([
  'UnprocessedKeysError',
  'TransactionInProgressException',
  // A PutItem, UpdateItem or DeleteItem on an item that a transaction has in flight.
  'TransactionConflictException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const RETRYABLE_REASONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

/**
 * Node's codes for a DynamoDB that could not be reached or hung up: refused, reset, timed out, name
 * not resolved. These errors carry no HTTP status, yet DynamoDB being down is a passing fault.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether a failure may pass on retry: throttling, timeouts, network failures, 5xx, transaction
 * conflicts. A cancelled transaction counts only when every action it names was cancelled for a
 * passing reason or none (`None`): a failed condition is an answer, not a fault, and a validation
 * error fails again.
 */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TransactionCanceledException') {
    const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    const passing = (code: string | undefined) => code !== undefined && RETRYABLE_REASONS.has(code);
    return reasons.some((r) => passing(r.Code)) && reasons.every((r) => r.Code === 'None' || passing(r.Code));
  }
  if (RETRYABLE_NAMES.has(error.name)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status !== undefined && status >= 500;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const unavailable = (cause?: unknown) =>
  new TemporarilyUnavailableError('The service is busy; retry in a moment', 1, { cause });

/**
 * Runs `operation`, retrying passing failures with exponential backoff and full jitter; when the
 * attempts run out, throws {@link TemporarilyUnavailableError} (a 503 with Retry-After), keeping
 * the cause for the logs only. Each retry counts in the `DynamoDbRetries` metric.
 *
 * Within a request, no attempt starts that could run into its request timeout after the request's
 * deadline (less ANSWER_MARGIN_MS): it answers 503 at once instead. Each call's worst case fits
 * the function's timeout, but a route makes several calls one after another, and a DynamoDB that
 * stalls on each would otherwise keep the function past its timeout, which API Gateway answers
 * 502 with no Retry-After.
 *
 * A transaction answered `TransactionInProgressException` is our own earlier try, sent again with
 * its token after the request timeout while DynamoDB still runs it: not a fault, and quick tries
 * only meet it again. Those answers do not use up the attempts; the call tries again every
 * `maxDelayMs` for as long as its worst case (`worstCaseCallMs`) allows, as DynamoDB's guidance
 * (keep retrying for at least 5 s after the first try) asks. Three quick tries answered so gave a
 * payment a 503 of our own making whenever DynamoDB Local queued its transaction past 2 s
 * (test/integration/wallet-slow-transaction.test.ts).
 */
export async function withRetries<T>(
  operation: () => Promise<T>,
  policy: RetryPolicy = defaultRetryPolicy,
): Promise<T> {
  const deadline = requestDeadline();
  const lastStart =
    deadline === undefined ? Number.POSITIVE_INFINITY : deadline - ANSWER_MARGIN_MS - REQUEST_TIMEOUT_MS;
  // Once the call has waited for a transaction in progress, no try starts that could end past its
  // worst case. The policy's own tries stay within it, give or take a timeout's few milliseconds,
  // so they are not held to it: a third try is not lost to those.
  const lastCallStart = Date.now() + worstCaseCallMs(policy) - REQUEST_TIMEOUT_MS;
  let waited = false;
  let failure: unknown;
  for (let failures = 0; ; ) {
    if (Date.now() > lastStart || (waited && Date.now() > lastCallStart)) throw unavailable(failure);
    try {
      return await operation();
    } catch (error) {
      if (!isRetryable(error)) throw error;
      failure = error;
      const waiting = (error as Error).name === 'TransactionInProgressException';
      waited ||= waiting;
      if (!waiting && ++failures >= policy.attempts) throw unavailable(error);
      addMetric('DynamoDbRetries', 1);
      await sleep(
        waiting
          ? policy.maxDelayMs
          : Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** failures),
      );
    }
  }
}
