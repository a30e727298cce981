/**
 * The baseline plus Powertools Metrics alone writing the request's one line: the EMF document with
 * the request's fields as metadata (`addMetadata`), the single-line form closest to ours.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AlternativeEvent } from './event.ts';

export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

const metrics = new Metrics({
  namespace: 'WalletCatalog',
  serviceName: 'wallet-catalog-api',
  defaultDimensions: { stage: process.env.STAGE ?? 'local' },
});

export const handler = async (event: AlternativeEvent) => {
  const started = performance.now();
  const response = { statusCode: 200, body: '' };
  metrics.addMetric('DynamoDbRetries', MetricUnit.Count, 0);
  metrics.addDimension('route', 'get-balance');
  metrics.addMetric('Requests', MetricUnit.Count, 1);
  metrics.addMetric(
    'Latency',
    MetricUnit.Milliseconds,
    Math.round((performance.now() - started) * 1000) / 1000,
  );
  metrics.addMetadata('requestId', event.requestId);
  metrics.addMetadata('sub', event.sub);
  metrics.addMetadata('outcome', 'ok');
  metrics.publishStoredMetrics();
  return response;
};
