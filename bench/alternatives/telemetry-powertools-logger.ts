/** The baseline plus Powertools Logger alone writing the request's fields (no metrics): one line. */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AlternativeEvent } from './event.ts';

export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

const logger = new Logger({ serviceName: 'wallet-catalog-api' });

export const handler = async (event: AlternativeEvent) => {
  const started = performance.now();
  const response = { statusCode: 200, body: '' };
  logger.info('request', {
    requestId: event.requestId,
    route: 'get-balance',
    sub: event.sub,
    status: response.statusCode,
    outcome: 'ok',
    latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
  });
  return response;
};
