/**
 * The baseline plus the OpenTelemetry API only, as a function instrumented for the ADOT Lambda layer
 * would be: the layer's wrapper (`AWS_LAMBDA_EXEC_WRAPPER=/opt/otel-instrument`) registers the SDK
 * and exporter; without it every call below is a no-op.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

const tracer = trace.getTracer('wallet-catalog-api');
const base = new DynamoDBClient({});
base.middlewareStack.add(
  (next, context) => (args) =>
    tracer.startActiveSpan(
      `DynamoDB.${String(context.commandName).replace(/Command$/, '')}`,
      { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'aws-api', 'rpc.service': 'DynamoDB' } },
      async (span) => {
        try {
          return await next(args);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw error;
        } finally {
          span.end();
        }
      },
    ),
  { step: 'initialize', name: 'otelDynamoDbSpan' },
);
export const client = DynamoDBDocumentClient.from(base);

export const handler = async () => ({ statusCode: 200, body: '' });
