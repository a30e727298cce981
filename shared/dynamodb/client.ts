import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { optionalEnv } from '../config.ts';
import { traceDynamoDb } from '../observability/xray.ts';

/**
 * Creates the DocumentClient a repository module keeps for its lifetime (created at load, reused
 * by every invocation). `DYNAMODB_ENDPOINT` points it at DynamoDB Local; unset on AWS.
 */
export function createDocumentClient(): DynamoDBDocumentClient {
  const endpoint = optionalEnv('DYNAMODB_ENDPOINT');
  const client = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    // Fail fast inside the Lambda timeout so that bounded retries, not the platform, decide.
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 },
  });
  traceDynamoDb(client);
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
