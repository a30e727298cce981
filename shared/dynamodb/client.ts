import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { optionalEnv } from '../config.ts';
import { traceDynamoDb } from '../observability/xray.ts';

/**
 * How long one request to DynamoDB may take, connection included, before it fails with a
 * `TimeoutError` that {@link withRetries} retries. DynamoDB answers in milliseconds; a request
 * still open after 2 s is stalled, not slow. See ATTEMPT_BUDGET in retry.ts for the total.
 */
export const REQUEST_TIMEOUT_MS = 2_000;
const CONNECTION_TIMEOUT_MS = 1_000;

/** Where the client sends its requests: DynamoDB Local or a fault proxy; unset on AWS. */
export interface DocumentClientOptions {
  readonly endpoint?: string | undefined;
}

/**
 * Creates the DocumentClient a function's composition root keeps for its lifetime (created at
 * cold start, reused by every invocation). Without options, `DYNAMODB_ENDPOINT` points it at
 * DynamoDB Local (unset on AWS); a test passes the endpoint of its own fault proxy instead.
 *
 * The SDK makes one attempt per call: {@link withRetries} is the only retry layer (see
 * docs/decisions/dynamodb-retries.md), otherwise its 3 attempts would each hide the SDK's 3.
 */
export function createDocumentClient(
  options: DocumentClientOptions = { endpoint: optionalEnv('DYNAMODB_ENDPOINT') },
): DynamoDBDocumentClient {
  const { endpoint } = options;
  const client = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      // Without this the handler only logs a warning when requestTimeout passes and keeps
      // waiting: a stalled DynamoDB then holds the function until API Gateway's 29 s 504.
      throwOnRequestTimeout: true,
      // Covers a response body that stops arriving after its headers (requestTimeout ends there).
      socketTimeout: REQUEST_TIMEOUT_MS,
    },
  });
  traceDynamoDb(client);
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
