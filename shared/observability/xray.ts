import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:dgram';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * DynamoDB calls as X-Ray subsegments, without the X-Ray SDK (about 1 MB and a measurable cold
 * start): a middleware times each operation and sends one subsegment document over UDP to the
 * X-Ray daemon Lambda runs beside the function, under the invocation's trace. Nothing happens
 * when the invocation is not sampled or no daemon is configured (locally, in tests). Under the
 * ADOT Lambda layer the calls become OpenTelemetry spans instead (./opentelemetry.ts), the path
 * that outlives the X-Ray daemon (docs/decisions/tracing.md).
 */

const HEADER = '{"format":"json","version":1}\n';

/** Lambda sets this to a layer's wrapper script; the ADOT layers' is `/opt/otel-instrument`. */
const underOpenTelemetryLayer = process.env.AWS_LAMBDA_EXEC_WRAPPER?.endsWith('/otel-instrument') ?? false;
// Imported only under the layer, so that nowhere else does a cold start evaluate the OpenTelemetry
// API (imported eagerly it measured +0.7 % and +9 % of get-balance's import CPU in two paired runs).
const openTelemetry = underOpenTelemetryLayer ? await import('./opentelemetry.ts') : undefined;
const daemon = parseDaemonAddress(process.env.AWS_XRAY_DAEMON_ADDRESS);
let socket: Socket | undefined;

function parseDaemonAddress(value: string | undefined): { host: string; port: number } | undefined {
  // "host:port", or Lambda's "udp:host:port tcp:host:port" form.
  const udp = value?.split(' ').find((part) => !part.startsWith('tcp:')) ?? '';
  const match = /^(?:udp:)?([^:]+):(\d+)$/.exec(udp);
  return match ? { host: match[1] as string, port: Number(match[2]) } : undefined;
}

/** The trace and parent segment of the current invocation, when X-Ray sampled it. */
function currentTrace(): { traceId: string; parentId: string } | undefined {
  // Lambda sets this per invocation: "Root=1-…;Parent=…;Sampled=1".
  const header = process.env._X_AMZN_TRACE_ID;
  if (!header) return undefined;
  const fields = Object.fromEntries(header.split(';').map((part) => part.split('=') as [string, string]));
  return fields.Sampled === '1' && fields.Root && fields.Parent
    ? { traceId: fields.Root, parentId: fields.Parent }
    : undefined;
}

function send(document: object): void {
  if (!daemon) return;
  if (!socket) {
    // Loaded on first use, not at cold start: most local and test runs never trace.
    const { createSocket } = process.getBuiltinModule('node:dgram') as typeof import('node:dgram');
    socket = createSocket('udp4');
    // Never keep a Lambda (or a test) alive for a trace.
    socket.unref();
  }
  socket.send(HEADER + JSON.stringify(document), daemon.port, daemon.host, () => undefined);
}

/**
 * Adds the tracing middleware to a DynamoDB client: OpenTelemetry spans under the ADOT layer,
 * X-Ray subsegments over UDP otherwise (no-op without a daemon address).
 */
export function traceDynamoDb(client: DynamoDBClient): void {
  if (openTelemetry) {
    openTelemetry.traceDynamoDbWithOpenTelemetry(client);
    return;
  }
  if (!daemon) return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const trace = currentTrace();
      if (!trace) return next(args);
      const start = Date.now() / 1000;
      const operation = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
      const tableName = (args.input as { TableName?: string }).TableName;
      let status = 200;
      let errorName: string | undefined;
      try {
        const output = await next(args);
        return output;
      } catch (error) {
        status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 500;
        errorName = (error as Error).name;
        throw error;
      } finally {
        send({
          type: 'subsegment',
          name: 'DynamoDB',
          namespace: 'aws',
          id: randomBytes(8).toString('hex'),
          trace_id: trace.traceId,
          parent_id: trace.parentId,
          start_time: start,
          end_time: Date.now() / 1000,
          aws: { operation, ...(tableName ? { table_name: tableName } : {}), region: process.env.AWS_REGION },
          http: { response: { status } },
          ...(status === 400 && errorName?.includes('Throttl') ? { throttle: true } : {}),
          ...(status >= 400 && status < 500 ? { error: true } : {}),
          ...(status >= 500 ? { fault: true } : {}),
          ...(errorName
            ? { cause: { exceptions: [{ id: randomBytes(8).toString('hex'), type: errorName }] } }
            : {}),
        });
      }
    },
    { step: 'initialize', name: 'xrayDynamoDbSubsegment' },
  );
}
