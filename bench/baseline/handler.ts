/**
 * The baseline every function is compared with: the least a DynamoDB-backed function can be, a
 * module that loads the SDK and constructs the DocumentClient, and a handler that only returns.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

// Kept at module scope, as the functions keep theirs, so its construction is part of the init.
export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

/** Answers without doing anything: per-invocation cost of a bare async Lambda handler. */
export const handler = async (): Promise<{ statusCode: number; body: string }> => ({
  statusCode: 200,
  body: '',
});
