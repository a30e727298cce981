import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tableNamesOf } from './dynamodb-tables.ts';

/**
 * DynamoDB calls as OpenTelemetry client spans, for functions run under the ADOT Lambda layer
 * (`AWS_LAMBDA_EXEC_WRAPPER=/opt/otel-instrument`): the layer's wrapper registers the
 * OpenTelemetry SDK, the X-Ray propagator and an exporter before the handler loads, and the spans
 * made here through the API go wherever it sends them. The path that outlives the X-Ray daemon's
 * end of support (25 Feb 2027; docs/decisions/tracing.md). Only the API is bundled (its size: docs/decisions/tracing.md), and
 * ./tracing.ts imports this module only under the layer.
 */

const tracer = trace.getTracer('wallet-catalog-api');

/** Adds the span middleware to a DynamoDB client. */
export function traceDynamoDbWithOpenTelemetry(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => (args) => {
      const operation = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
      const tableNames = tableNamesOf(args.input);
      return tracer.startActiveSpan(
        `DynamoDB.${operation}`,
        {
          kind: SpanKind.CLIENT,
          // OpenTelemetry's semantic conventions for AWS SDK calls (rpc.*, aws.dynamodb.*).
          attributes: {
            'rpc.system': 'aws-api',
            'rpc.service': 'DynamoDB',
            'rpc.method': operation,
            ...(process.env.AWS_REGION ? { 'cloud.region': process.env.AWS_REGION } : {}),
            ...(tableNames.length > 0 ? { 'aws.dynamodb.table_names': tableNames } : {}),
          },
        },
        async (span) => {
          try {
            return await next(args);
          } catch (error) {
            const name = (error as Error).name;
            span.setAttribute('error.type', name);
            span.setStatus({ code: SpanStatusCode.ERROR, message: name });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    },
    { step: 'initialize', name: 'otelDynamoDbSpan' },
  );
}
