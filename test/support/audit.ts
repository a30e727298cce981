import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { createAuditHandler } from '#functions/wallet-audit/audit-function.ts';
import { createSegmentHandler } from '#functions/wallet-audit-segment/segment-function.ts';
import type { ProxiedRequest } from '#infra/local/dynamodb-faults.ts';
import type { DynamoDbProxy } from '#infra/local/dynamodb-proxy.ts';
import { S3_ENDPOINT_ENV } from '#shared/s3/buckets.ts';
import { createS3Client } from '#shared/s3/client.ts';
import { type AuditOptions, type AuditReport, auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { createS3PartialStore } from '#shared/wallet/audit/partial-store.ts';
import { mentions, proxiedClient } from './faults.ts';

/**
 * The audit's client for auditWhile and auditWhileScanned, through `proxy`: patient past their
 * hold. With the SDK's 2 s request timeout, a `during()` that took longer saw the held Scan sent
 * again, unheld, and answered before anything it wrote had committed (review helper-39).
 */
export const heldScanClient = (proxy: DynamoDbProxy): DynamoDBDocumentClient =>
  proxiedClient(proxy, { requestTimeoutMs: 60_000 });

/** The Scan segments the audit tests run: few, so that a small table has items in each. */
export const SEGMENTS = 3;

/**
 * The audit's two paths: a horizon after everything (every item settled: checked by fingerprint)
 * and one before (every item kept and checked item by item).
 */
const HORIZONS = {
  'by fingerprint': () => new Date(Date.now() + 60_000),
  'item by item': () => new Date(0),
} as const;

/** The audit of `tableName` under each horizon, labelled. */
export async function auditBoth(
  client: DynamoDBDocumentClient,
  tableName: string,
): Promise<[string, AuditReport][]> {
  const reports: [string, AuditReport][] = [];
  for (const [path, horizon] of Object.entries(HORIZONS)) {
    reports.push([
      path,
      await auditTable(client, tableName, { segments: SEGMENTS, settledBefore: horizon() }),
    ]);
  }
  return reports;
}

/**
 * Audits `tableName` through `proxy` with `during()` run once DynamoDB has answered every Scan
 * segment but `held` (one page each: the tables are small), before segment `held` is read.
 */
export function auditWhile(
  proxy: DynamoDbProxy,
  client: DynamoDBDocumentClient,
  tableName: string,
  during: () => Promise<void>,
  options: AuditOptions = {},
  held = 0,
): Promise<AuditReport> {
  return auditHolding(proxy, client, tableName, during, options, held, 'request');
}

/**
 * Audits `tableName` through `proxy` with `during()` run once DynamoDB has answered every Scan
 * segment (one page each: the tables are small), while the answer of segment `held` is on its way
 * to the audit: the scan saw every item as it was before `during()`, and every read after it sees
 * what `during()` wrote. Whatever lands where, the race is the same every run.
 */
export function auditWhileScanned(
  proxy: DynamoDbProxy,
  client: DynamoDBDocumentClient,
  tableName: string,
  during: () => Promise<void>,
  options: AuditOptions = {},
  held = SEGMENTS - 1,
): Promise<AuditReport> {
  return auditHolding(proxy, client, tableName, during, options, held, 'answer');
}

/**
 * Audits `tableName` while the proxy holds segment `held`'s Scan (its request, or its answer once
 * DynamoDB gave it), runs `during()` once every other segment is answered, then lets it go.
 */
async function auditHolding(
  proxy: DynamoDbProxy,
  client: DynamoDBDocumentClient,
  tableName: string,
  during: () => Promise<void>,
  options: AuditOptions,
  held: number,
  hold: 'request' | 'answer',
): Promise<AuditReport> {
  const released = Promise.withResolvers<void>();
  const scanned = Promise.withResolvers<void>();
  const segment = (n: number) => (r: ProxiedRequest) =>
    mentions(tableName)(r) && new RegExp(`"Segment":${n}\\b`).test(r.body);
  proxy.inject(
    hold === 'request'
      ? { kind: 'hold', until: released.promise }
      : { kind: 'hold-answer', until: released.promise, answered: scanned.resolve },
    { operation: 'Scan', when: segment(held), times: 1 },
  );
  const audit = auditTable(client, tableName, { segments: SEGMENTS, ...options });
  if (hold === 'answer') await scanned.promise;
  const others = Array.from({ length: SEGMENTS }, (_, n) => n).filter((n) => n !== held);
  while (others.reduce((sum, n) => sum + proxy.answered('Scan', segment(n)).length, 0) < others.length) {
    await sleep(5);
  }
  try {
    await during();
  } finally {
    released.resolve();
  }
  return audit;
}

/** The Scan segment (of SEGMENTS) that holds the item at `pk`. */
export async function segmentOf(
  client: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
): Promise<number> {
  for (let n = 0; n < SEGMENTS; n++) {
    const { Items } = await client.send(
      new ScanCommand({
        TableName: tableName,
        Segment: n,
        TotalSegments: SEGMENTS,
        FilterExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      }),
    );
    if (Items?.length) return n;
  }
  throw new Error(`No item at ${pk}`);
}

/**
 * The deployed audit's state machine, by hand: its plan (a fresh key, the run's start), a child
 * Lambda handler per segment writing its partial to a bucket of the local S3, then the reducer's
 * handler. Resolves to the reducer's answer; rejects as it does (LedgerBreakError on a break).
 */
export async function runScheduledAudit(
  client: DynamoDBDocumentClient,
  tableName: string,
  segments: number,
): Promise<{ breaks: number; partialsLeft: number }> {
  const s3 = createS3Client({ endpoint: inject('env')[S3_ENDPOINT_ENV] });
  const bucket = `audit-${randomUUID()}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const partials = createS3PartialStore(s3, bucket);
  const run = { runId: randomUUID(), key: randomUUID(), startedAt: new Date().toISOString(), segments };
  try {
    const children = createSegmentHandler({ client, tableName, partials });
    await Promise.all(Array.from({ length: segments }, (_, segment) => children({ ...run, segment })));
    const answer = await createAuditHandler({ client, tableName, partials })(run);
    const { KeyCount = 0 } = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    return { ...answer, partialsLeft: KeyCount };
  } finally {
    s3.destroy();
  }
}
