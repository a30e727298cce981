/** The baseline plus `new Date().toISOString()` per request, the code `shared/time.ts` caches. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export let last = '';

export const handler = async () => {
  last = new Date().toISOString();
  return { statusCode: 200, body: '' };
};
