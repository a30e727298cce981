import { describe, expect, it } from 'vitest';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { defaultRetryPolicy, worstCaseCallMs } from '#shared/dynamodb/retry.ts';

describe('DynamoDB time budget', () => {
  it("keeps every attempt of one DynamoDB call, timeouts and backoff included, inside the function's timeout", () => {
    const worstCase = worstCaseCallMs(defaultRetryPolicy);
    // Room left for the cold start and the rest of the request, so the function answers 503 itself.
    expect(worstCase).toBeLessThanOrEqual(ProjectFunction.TIMEOUT.toMilliseconds() - 3_000);
  });
});
