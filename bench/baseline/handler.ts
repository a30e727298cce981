/**
 * The baseline every function is compared with: the least a DynamoDB-backed function can be, a
 * module that loads the SDK and constructs the DocumentClient, and a handler that writes the one
 * log line per request every function writes (same fields, same EMF metrics, JSON.stringify and one
 * `write` to stdout, as any logger would) and returns. Without that line the warm comparison charged
 * each function the write system call no function can avoid.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

// Kept at module scope, as the functions keep theirs, so its construction is part of the init.
export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

const stage = process.env.STAGE;
const directive = [
  {
    Namespace: 'WalletCatalog',
    Dimensions: stage ? [['stage', 'route']] : [['route']],
    Metrics: [
      { Name: 'Requests', Unit: 'Count' },
      { Name: 'Latency', Unit: 'Milliseconds' },
    ],
  },
];

interface Event {
  readonly resource?: string;
  readonly requestContext?: {
    readonly requestId?: string;
    readonly authorizer?: { readonly sub?: string } | null;
  };
}

/** Writes the request's log line and answers: per-invocation cost of a logging Lambda handler. */
export const handler = async (event?: Event): Promise<{ statusCode: number; body: string }> => {
  const started = performance.now();
  const now = Date.now();
  process.stdout.write(
    `${JSON.stringify({
      timestamp: new Date(now).toISOString(),
      level: 'INFO',
      service: 'wallet-catalog-api',
      stage,
      message: 'request',
      requestId: event?.requestContext?.requestId,
      route: event?.resource,
      sub: event?.requestContext?.authorizer?.sub,
      status: 200,
      outcome: 'ok',
      latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
      coldStart: false,
      Requests: 1,
      Latency: 0,
      _aws: { Timestamp: now, CloudWatchMetrics: directive },
    })}\n`,
  );
  return { statusCode: 200, body: '' };
};
