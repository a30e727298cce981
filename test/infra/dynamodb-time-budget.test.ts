import { describe, expect, it } from 'vitest';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { CREDIT_POSTER_STREAM } from '#infra/credit-poster-settings.ts';
import { defaultRetryPolicy, worstCaseCallMs } from '#shared/dynamodb/retry.ts';
import { POSTING_CALL_MS, POSTING_DEADLINE_MS } from '#shared/wallet/hot-wallet/post-credits.ts';

describe('DynamoDB time budget', () => {
  it("keeps every attempt of one DynamoDB call, timeouts and backoff included, inside the function's timeout", () => {
    const worstCase = worstCaseCallMs(defaultRetryPolicy);
    // Room left for the cold start and the rest of the request, so the function answers 503 itself.
    expect(worstCase).toBeLessThanOrEqual(ProjectFunction.TIMEOUT.toMilliseconds() - 3_000);
  });

  it("keeps the credit poster's longest call inside its timeout: its last write, started by the call's deadline, the lease's forced release, then the wallet's mark", () => {
    // No posting's write starts past POSTING_CALL_MS + POSTING_DEADLINE_MS from the call's start, and
    // after it come one call to let go of the lease and one to mark the wallet hot
    // (test/unit/post-credits.test.ts: the call's time; posting-lease.test.ts: one write to let go).
    const longest = POSTING_CALL_MS + POSTING_DEADLINE_MS + 3 * worstCaseCallMs(defaultRetryPolicy);
    expect(longest).toBeLessThanOrEqual(CREDIT_POSTER_STREAM.functionTimeoutSeconds * 1000 - 3_000);
  });
});
