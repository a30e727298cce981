/**
 * The segmented ledger audit on this machine (`npm run wallet:audit -- --segments N`): N children
 * in worker threads, as the deployed state machine's map runs N Lambdas, each scanning its one
 * segment and handing back its partial as JSON text; then the reducer here. The children and the
 * reducer are the deployed ones' code (shared/wallet/audit/ledger-scan.ts, ledger-audit.ts).
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { type AuditReport, reduceAudit } from '#shared/wallet/audit/ledger-audit.ts';
import { type AuditPartial, scanSegment } from '#shared/wallet/audit/ledger-scan.ts';
import { type AuditPlan, decodePartial, encodePartial, planAudit } from '#shared/wallet/audit/partial.ts';

interface ChildData {
  readonly tableName: string;
  readonly endpoint?: string;
  readonly plan: AuditPlan;
  readonly segment: number;
}

export interface WorkerAuditOptions {
  readonly segments: number;
  /** DynamoDB Local's endpoint; AWS when absent. */
  readonly endpoint?: string;
  readonly settledBefore?: Date;
}

/** Audits `tableName`: a worker thread per segment, then the reducer with `client`. */
export async function auditInWorkers(
  client: DynamoDBDocumentClient,
  tableName: string,
  { segments, endpoint, settledBefore }: WorkerAuditOptions,
): Promise<AuditReport> {
  const plan = planAudit(segments, settledBefore);
  const texts = await Promise.all(
    Array.from({ length: segments }, (_, segment) =>
      runChild({ tableName, ...(endpoint === undefined ? {} : { endpoint }), plan, segment }),
    ),
  );
  return reduceAudit(
    client,
    tableName,
    plan,
    texts.map((text) => decodePartial<AuditPartial>(text)),
  );
}

function runChild(data: ChildData): Promise<string> {
  return new Promise((resolve, reject) => {
    // The worker inherits this process's environment (credentials, region) as it is now.
    const worker = new Worker(new URL(import.meta.url), { workerData: data });
    let text: string | undefined;
    worker.once('message', (message: string) => {
      text = message;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (text !== undefined) resolve(text);
      else reject(new Error(`The child of segment ${data.segment} exited with ${code} and no partial`));
    });
  });
}

if (!isMainThread && parentPort) {
  const { tableName, endpoint, plan, segment } = workerData as ChildData;
  const client = createDocumentClient(endpoint === undefined ? {} : { endpoint });
  try {
    parentPort.postMessage(encodePartial(await scanSegment(client, tableName, plan, segment)));
  } finally {
    client.destroy();
  }
}
