import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { optionalEnv } from '../config.ts';
import { type DynamoDbTracing, NO_TRACING, traceDynamoDb } from '../observability/tracing.ts';

/**
 * How long one request to DynamoDB may take, connection included, before it fails with a
 * `TimeoutError` that {@link withRetries} retries. DynamoDB answers in milliseconds; a request
 * still open after 2 s is stalled, not slow. See worstCaseCallMs in retry.ts for the total.
 */
export const REQUEST_TIMEOUT_MS = 2_000;
const CONNECTION_TIMEOUT_MS = 1_000;

/** Where the client sends its requests; the regional DynamoDB endpoint unless given. */
export interface DocumentClientOptions {
  /** DynamoDB Local, or a fault-injecting proxy in front of it; `DYNAMODB_ENDPOINT` when absent. */
  readonly endpoint?: string;
  /** How its calls are traced: none unless given (a composition root passes `tracingFromEnvironment()`). */
  readonly tracing?: DynamoDbTracing;
  /**
   * REQUEST_TIMEOUT_MS unless given: only a test's client whose requests the fault proxy holds on
   * purpose for longer, so that the SDK does not send them again past the hold.
   */
  readonly requestTimeoutMs?: number;
}

/**
 * Creates the DocumentClient a function's composition root makes once per container and hands
 * to its repositories. `DYNAMODB_ENDPOINT` points it at DynamoDB Local; unset on AWS. Tests pass
 * `endpoint` instead (a fault proxy), so no test has to change the environment before an import.
 *
 * The SDK makes one attempt per call: {@link withRetries} retries a call (see
 * docs/decisions/dynamodb-retries.md), otherwise its 3 attempts would each hide the SDK's 3.
 */
export function createDocumentClient(options: DocumentClientOptions = {}): DynamoDBDocumentClient {
  const endpoint = options.endpoint ?? optionalEnv('DYNAMODB_ENDPOINT');
  const client = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      // Without this the handler only logs a warning when requestTimeout passes and keeps
      // waiting: a stalled DynamoDB then holds the function until API Gateway's 29 s 504.
      throwOnRequestTimeout: true,
      // Covers a response body that stops arriving after its headers (requestTimeout ends there).
      socketTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    },
  });
  traceDynamoDb(client, options.tracing ?? NO_TRACING);
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
