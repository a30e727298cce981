import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { logger } from '#shared/observability/telemetry.ts';
import { scanSegment } from '#shared/wallet/audit/ledger-scan.ts';
import { encodePartial, planOfRun } from '#shared/wallet/audit/partial.ts';
import type { PartialStore } from '#shared/wallet/audit/partial-store.ts';

export interface SegmentFunctionDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly partials: PartialStore;
}

/**
 * A child of the scheduled ledger audit, one item of its Distributed Map: scans segment `segment`
 * of the run's, read-only (Scan), and leaves what it found for the reducer in the partials bucket.
 * Returns only its size: the partial itself may outgrow what a state may pass on. Run again by the
 * map when it fails: it rewrites the same object, so a retry is harmless.
 */
export function createSegmentHandler({ client, tableName, partials }: SegmentFunctionDependencies) {
  return async (event: unknown): Promise<{ segment: number; items: number; bytes: number }> => {
    const { runId, ...plan } = planOfRun(event);
    const segment = (event as { segment?: unknown }).segment;
    if (!Number.isInteger(segment) || (segment as number) < 0 || (segment as number) >= plan.segments) {
      throw new TypeError(`Not a segment of ${plan.segments}: ${String(segment)}`);
    }
    const partial = await scanSegment(client, tableName, plan, segment as number);
    const text = encodePartial(partial);
    await partials.put(runId, partial.segment, text);
    const figures = { segment: partial.segment, items: partial.counts.itemsScanned, bytes: text.length };
    logger.info('ledger audit: segment scanned', { runId, ...figures });
    return figures;
  };
}
