/**
 * The baseline plus a self-contained OpenTelemetry set-up bundled into the function (no layer):
 * API, trace SDK, X-Ray id generator and propagator, OTLP/HTTP exporter (to a collector on
 * localhost:4318, e.g. the ADOT collector extension), batch processor.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { AWSXRayIdGenerator } from '@opentelemetry/id-generator-aws-xray';
import { AWSXRayPropagator } from '@opentelemetry/propagator-aws-xray';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

const provider = new TracerProvider({
  idGenerator: new AWSXRayIdGenerator(),
  spanProcessors: [
    new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: 'http://localhost:4318/v1/traces' }) }),
  ],
});
trace.setGlobalTracerProvider(provider);
propagation.setGlobalPropagator(new AWSXRayPropagator());
const tracer = trace.getTracer('wallet-catalog-api');

const base = new DynamoDBClient({});
base.middlewareStack.add(
  (next, context) => (args) =>
    tracer.startActiveSpan(`DynamoDB.${String(context.commandName)}`, async (span) => {
      try {
        return await next(args);
      } finally {
        span.end();
      }
    }),
  { step: 'initialize', name: 'otelDynamoDbSpan' },
);
export const client = DynamoDBDocumentClient.from(base);

export const handler = async () => ({ statusCode: 200, body: '' });
