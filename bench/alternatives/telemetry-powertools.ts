/**
 * The baseline plus Powertools for AWS Lambda's Logger and Metrics doing what the project's request
 * line does: the same fields logged, the same metrics (Requests, Latency, ColdStarts, one metric a
 * use case adds) in namespace WalletCatalog with the stage and route dimensions, published per request.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AlternativeEvent } from './event.ts';

export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

const logger = new Logger({ serviceName: 'wallet-catalog-api' });
const metrics = new Metrics({
  namespace: 'WalletCatalog',
  serviceName: 'wallet-catalog-api',
  defaultDimensions: { stage: process.env.STAGE ?? 'local' },
});
let coldStart = true;

export const handler = async (event: AlternativeEvent) => {
  const started = performance.now();
  const response = { statusCode: 200, body: '' };
  metrics.addMetric('DynamoDbRetries', MetricUnit.Count, 0);
  const latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
  metrics.addDimension('route', 'get-balance');
  metrics.addMetric('Requests', MetricUnit.Count, 1);
  metrics.addMetric('Latency', MetricUnit.Milliseconds, latencyMs);
  if (coldStart) metrics.addMetric('ColdStarts', MetricUnit.Count, 1);
  logger.info('request', {
    requestId: event.requestId,
    route: 'get-balance',
    sub: event.sub,
    status: response.statusCode,
    outcome: 'ok',
    latencyMs,
    coldStart,
  });
  coldStart = false;
  metrics.publishStoredMetrics();
  return response;
};
