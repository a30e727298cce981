import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:dgram';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableNamesOf } from './dynamodb-tables.ts';

/**
 * DynamoDB calls as X-Ray subsegments, without the X-Ray SDK (a large bundle and a measurable cold
 * start): a middleware times each operation and sends one subsegment document over UDP to the
 * X-Ray daemon Lambda runs beside the function, under the invocation's trace. Nothing happens
 * when the invocation is not sampled. ./tracing.ts chooses between this, OpenTelemetry spans under
 * the ADOT Lambda layer (./opentelemetry.ts, the path that outlives the X-Ray daemon:
 * docs/decisions/tracing.md) and nothing.
 */

const HEADER = '{"format":"json","version":1}\n';

let socket: Socket | undefined;

/** Where the X-Ray daemon listens for segment documents (UDP). */
export interface XRayDaemon {
  readonly host: string;
  readonly port: number;
}

/** The daemon of `AWS_XRAY_DAEMON_ADDRESS`, as Lambda sets it; undefined when unset or unreadable. */
export function parseDaemonAddress(value: string | undefined): XRayDaemon | undefined {
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

function send(daemon: XRayDaemon, document: object): void {
  if (!socket) {
    // Loaded on first use, not at cold start: most local and test runs never trace.
    const { createSocket } = process.getBuiltinModule('node:dgram') as typeof import('node:dgram');
    socket = createSocket('udp4');
    // Never keep a Lambda (or a test) alive for a trace.
    socket.unref();
  }
  socket.send(HEADER + JSON.stringify(document), daemon.port, daemon.host, () => undefined);
}

/** Adds the subsegment middleware to a DynamoDB client, sending to `daemon`. */
export function traceDynamoDbWithXRay(client: DynamoDBClient, daemon: XRayDaemon): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const trace = currentTrace();
      if (!trace) return next(args);
      const start = Date.now() / 1000;
      const operation = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
      const [tableName] = tableNamesOf(args.input);
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
        send(daemon, {
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
