import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseDaemonAddress, traceDynamoDbWithXRay, type XRayDaemon } from './xray.ts';

/**
 * How a function traces its DynamoDB calls: chosen once per container by its composition root
 * ({@link tracingFromEnvironment}) and handed to `createDocumentClient`, so that a test builds the
 * tracing it needs instead of setting the environment before an import.
 */
export type DynamoDbTracing =
  | { readonly kind: 'off' }
  /** X-Ray subsegments over UDP to the daemon Lambda runs beside the function (./xray.ts). */
  | { readonly kind: 'x-ray'; readonly daemon: XRayDaemon }
  /** OpenTelemetry client spans through the provider the ADOT layer registered (./opentelemetry.ts). */
  | { readonly kind: 'opentelemetry'; readonly instrument: (client: DynamoDBClient) => void };

export const NO_TRACING: DynamoDbTracing = { kind: 'off' };

/**
 * The tracing Lambda's environment asks for: OpenTelemetry under the ADOT layer (Lambda sets
 * `AWS_LAMBDA_EXEC_WRAPPER` to its wrapper, `/opt/otel-instrument`), X-Ray when a daemon address
 * is set, none otherwise (locally, in tests).
 */
export async function tracingFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<DynamoDbTracing> {
  if (env.AWS_LAMBDA_EXEC_WRAPPER?.endsWith('/otel-instrument')) {
    // Imported only under the layer, so that nowhere else does a cold start evaluate the
    // OpenTelemetry API (what the eager import cost: docs/decisions/tracing.md).
    const { traceDynamoDbWithOpenTelemetry } = await import('./opentelemetry.ts');
    return { kind: 'opentelemetry', instrument: traceDynamoDbWithOpenTelemetry };
  }
  const daemon = parseDaemonAddress(env.AWS_XRAY_DAEMON_ADDRESS);
  return daemon ? { kind: 'x-ray', daemon } : NO_TRACING;
}

/** Adds `tracing`'s middleware to a DynamoDB client (nothing when off). */
export function traceDynamoDb(client: DynamoDBClient, tracing: DynamoDbTracing): void {
  if (tracing.kind === 'x-ray') traceDynamoDbWithXRay(client, tracing.daemon);
  else if (tracing.kind === 'opentelemetry') tracing.instrument(client);
}
