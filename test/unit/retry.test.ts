import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
  TransactionConflictException,
  TransactionInProgressException,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { REQUEST_TIMEOUT_MS } from '#shared/dynamodb/client.ts';
import { isRetryable, withRetries, worstCaseCallMs } from '#shared/dynamodb/retry.ts';
import { TemporarilyUnavailableError } from '#shared/errors.ts';
import { ANSWER_MARGIN_MS, answeringBy } from '#shared/request-deadline.ts';

/*
 * The retry policy's view of DynamoDB's transaction conflicts, on the SDK's own exception classes.
 * (What the wire answers look like, and that the SDK turns them into these classes, is
 * test/integration/dynamodb-conflicts.test.ts.)
 */

const $metadata = { httpStatusCode: 400 };

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    $metadata,
    message: 'Transaction cancelled',
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

const fast = { attempts: 3, baseDelayMs: 0, maxDelayMs: 0 };

describe('the retry policy and transaction conflicts', () => {
  it('retries a plain write that met a transaction in flight (TransactionConflictException)', () => {
    const conflict = new TransactionConflictException({
      $metadata,
      message: 'Transaction is ongoing for the item',
    });
    expect(isRetryable(conflict)).toBe(true);
  });

  it('retries a transaction cancelled only for conflicts, the other actions having no reason', () => {
    expect(isRetryable(cancelled('None', 'TransactionConflict', 'None'))).toBe(true);
    expect(isRetryable(cancelled('TransactionConflict', 'TransactionConflict'))).toBe(true);
  });

  it('does not retry a transaction cancelled by a failed condition, conflicts or not', () => {
    expect(isRetryable(cancelled('ConditionalCheckFailed', 'None'))).toBe(false);
    expect(isRetryable(cancelled('TransactionConflict', 'ConditionalCheckFailed'))).toBe(false);
  });

  it('does not retry a transaction that would fail again for another reason beside a conflict', () => {
    expect(isRetryable(cancelled('TransactionConflict', 'ValidationError'))).toBe(false);
    expect(isRetryable(cancelled('None', 'None'))).toBe(false);
  });

  it('does not retry answers that are not faults', () => {
    expect(isRetryable(new ConditionalCheckFailedException({ $metadata, message: 'failed' }))).toBe(false);
    const validation = Object.assign(new Error('One or more parameter values were invalid'), {
      name: 'ValidationException',
      $metadata,
    });
    expect(isRetryable(validation)).toBe(false);
  });

  it('sends a write again after TransactionConflictException, and answers what the next attempt got', async () => {
    let calls = 0;
    const result = await withRetries(async () => {
      calls++;
      if (calls === 1) {
        throw new TransactionConflictException({ $metadata, message: 'Transaction is ongoing for the item' });
      }
      return 'written';
    }, fast);
    expect({ result, calls }).toEqual({ result: 'written', calls: 2 });
  });

  it('gives up with a 503 once every attempt met a conflict', async () => {
    let calls = 0;
    const attempt = withRetries(async () => {
      calls++;
      throw cancelled('TransactionConflict', 'None');
    }, fast);
    await expect(attempt).rejects.toBeInstanceOf(TemporarilyUnavailableError);
    expect(calls).toBe(3);
  });

  it('waits for its own transaction in progress past its attempts, within its worst case, then answers 503', async () => {
    vi.useFakeTimers();
    try {
      const policy = { attempts: 3, baseDelayMs: 25, maxDelayMs: 250 };
      const started = Date.now();
      const tries: number[] = [];
      const attempt = withRetries(async () => {
        tries.push(Date.now() - started);
        throw new TransactionInProgressException({
          $metadata,
          message: 'Transaction with the given request token is already in progress.',
        });
      }, policy);
      const ended = expect(attempt).rejects.toBeInstanceOf(TemporarilyUnavailableError);
      await vi.advanceTimersByTimeAsync(worstCaseCallMs(policy));
      await ended;
      // Every maxDelayMs while a try could still end within the call's worst case: more than its
      // 3 attempts (three quick tries were a 503 while DynamoDB still ran the first), and none
      // starting later than a request timeout before that worst case.
      expect(tries.length).toBeGreaterThan(policy.attempts + 10);
      expect(Math.max(...tries)).toBeLessThanOrEqual(worstCaseCallMs(policy) - REQUEST_TIMEOUT_MS);
    } finally {
      vi.useRealTimers();
    }
  });

  it("starts no try, first or later, that could end past the request's deadline, and answers 503 instead", async () => {
    let calls = 0;
    const conflict = async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 100));
      throw new TransactionConflictException({ $metadata, message: 'Transaction is ongoing for the item' });
    };
    // A request timeout, the margin to answer and less than a try's time left: the first try
    // starts, no retry does.
    const lastMoment = () => Date.now() + REQUEST_TIMEOUT_MS + ANSWER_MARGIN_MS + 50;
    await expect(answeringBy(lastMoment(), () => withRetries(conflict, fast))).rejects.toBeInstanceOf(
      TemporarilyUnavailableError,
    );
    expect(calls).toBe(1);
    // Less than that left: not even the first.
    await expect(
      answeringBy(Date.now() + REQUEST_TIMEOUT_MS, () => withRetries(conflict, fast)),
    ).rejects.toBeInstanceOf(TemporarilyUnavailableError);
    expect(calls).toBe(1);
    // Outside a request, every try.
    await expect(withRetries(conflict, fast)).rejects.toBeInstanceOf(TemporarilyUnavailableError);
    expect(calls).toBe(4);
  });
});
