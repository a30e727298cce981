import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGetBalanceHandler } from '#functions/get-balance/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { open } from '../support/wallet.ts';

/*
 * Under the ADOT Lambda layer, whose wrapper registers an OpenTelemetry SDK before the handler
 * loads: here a provider with an in-memory exporter stands in for it, and the handler runs against
 * DynamoDB Local as Lambda would run it.
 */
const exporter = new InMemorySpanExporter();
let handler: ReturnType<typeof createGetBalanceHandler>;

beforeAll(async () => {
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
  );
  // Built as its composition root builds it under the layer, whose wrapper Lambda names.
  const tracing = await tracingFromEnvironment({ AWS_LAMBDA_EXEC_WRAPPER: '/opt/otel-instrument' });
  handler = createGetBalanceHandler({
    client: createDocumentClient({ tracing }),
    tableName: process.env.WALLETS_TABLE_NAME as string,
    settings: loadWalletSettings(),
  });
});
afterAll(() => {
  trace.disable();
});

describe('OpenTelemetry', () => {
  it('makes each DynamoDB call a client span of the registered provider', async () => {
    // An open wallet: a new caller's first balance read also opens it (one more call).
    const sub = uniqueSub();
    await open(sub);
    exporter.reset();
    const response = await invoke(handler, apiEvent({ sub, scopes: ['read:wallet'] }));
    expect(response.statusCode).toBe(200);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['DynamoDB.BatchGetItem']);
    const [span] = spans;
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({
      'rpc.system': 'aws-api',
      'rpc.service': 'DynamoDB',
      'rpc.method': 'BatchGetItem',
      'aws.dynamodb.table_names': [process.env.WALLETS_TABLE_NAME],
    });
    expect(span?.status.code).not.toBe(SpanStatusCode.ERROR);
  });
});
