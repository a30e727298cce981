/**
 * The baseline plus the project's own request line (`shared/observability/telemetry.ts`): one JSON
 * line per request that is also the EMF document of its metrics.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { addMetric, withRequestTelemetry } from '#shared/observability/telemetry.ts';
import type { AlternativeEvent } from './event.ts';

export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export const handler = (event: AlternativeEvent) =>
  withRequestTelemetry({ route: 'get-balance', requestId: event.requestId, sub: event.sub }, async () => {
    addMetric('DynamoDbRetries', 0);
    return { statusCode: 200, body: '' };
  });
