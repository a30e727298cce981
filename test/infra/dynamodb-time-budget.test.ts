import { describe, expect, it } from 'vitest';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { CREDIT_POSTER_STREAM } from '#infra/credit-poster-settings.ts';
import { defaultRetryPolicy, worstCaseCallMs } from '#shared/dynamodb/retry.ts';
import { POSTING_CALL_MS, POSTING_DEADLINE_MS } from '#shared/wallet/post-credits.ts';

describe('DynamoDB time budget', () => {
  it("keeps every attempt of one DynamoDB call, timeouts and backoff included, inside the function's timeout", () => {
    const worstCase = worstCaseCallMs(defaultRetryPolicy);
    // Room left for the cold start and the rest of the request, so the function answers 503 itself.
    expect(worstCase).toBeLessThanOrEqual(ProjectFunction.TIMEOUT.toMilliseconds() - 3_000);
  });

  it("keeps the credit poster's longest call inside its timeout: the last batch, its last write, the lease let go, then the wallet's mark", () => {
    const longest = POSTING_CALL_MS + POSTING_DEADLINE_MS + 3 * worstCaseCallMs(defaultRetryPolicy);
    expect(longest).toBeLessThanOrEqual(CREDIT_POSTER_STREAM.functionTimeoutSeconds * 1000 - 3_000);
  });
});
