/** The baseline plus the project's X-Ray subsegment middleware (`shared/observability/xray.ts`). */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { traceDynamoDb, tracingFromEnvironment } from '#shared/observability/tracing.ts';

const base = new DynamoDBClient({});
traceDynamoDb(base, await tracingFromEnvironment());
export const client = DynamoDBDocumentClient.from(base);

export const handler = async () => ({ statusCode: 200, body: '' });
