/** The baseline plus `isoTimestamp()` of `shared/time.ts` per request. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isoTimestamp } from '#shared/time.ts';

export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export let last = '';

export const handler = async () => {
  last = isoTimestamp();
  return { statusCode: 200, body: '' };
};
