import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { logger } from '#shared/observability/telemetry.ts';
import { type AuditReport, reduceAudit } from '#shared/wallet/audit/ledger-audit.ts';
import type { AuditPartial } from '#shared/wallet/audit/ledger-scan.ts';
import { decodePartial, planOfRun } from '#shared/wallet/audit/partial.ts';
import type { PartialStore } from '#shared/wallet/audit/partial-store.ts';

/** The books do not balance: the function fails, and its Errors alarm (ledger-audit-failed) fires. */
export class LedgerBreakError extends Error {
  override readonly name = 'LedgerBreakError';
}

export interface AuditFunctionDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly partials: PartialStore;
}

/** Partials read ahead of the one being absorbed: each an S3 GetObject, held as text until its turn. */
const READ_AHEAD = 4;

/** A run's partials in segment order, a few read ahead, each decoded only when its turn comes. */
async function* read(partials: PartialStore, runId: string, segments: number): AsyncGenerator<AuditPartial> {
  const ahead: Promise<string>[] = [];
  const fetch = (segment: number) => {
    const text = partials.get(runId, segment);
    // Awaited in its turn; until then a failure must not be an unhandled rejection (the reducer
    // may stop before that turn).
    text.catch(() => {});
    ahead.push(text);
  };
  for (let next = 0; next < Math.min(READ_AHEAD, segments); next++) fetch(next);
  for (let segment = 0; segment < segments; segment++) {
    const text = await (ahead.shift() as Promise<string>);
    if (segment + READ_AHEAD < segments) fetch(segment + READ_AHEAD);
    yield decodePartial<AuditPartial>(text);
  }
}

/**
 * The reducer of the scheduled ledger audit, the last state of its state machine
 * (infra/constructs/ledger-audit.ts): reads every child's partial, adds them up, reads again by
 * key what needs an exact read, and decides; the same code as `npm run wallet:audit`. Read-only on
 * the table (Scan and BatchGetItem). Logs the summary and every break, each naming its item; fails
 * on any break, so that the function's Errors metric is the alarm's signal (runbook:
 * docs/operations.md).
 */
export function createAuditHandler({ client, tableName, partials }: AuditFunctionDependencies) {
  return async (event: unknown): Promise<{ breaks: number }> => {
    const { runId, ...plan } = planOfRun(event);
    const report = await reduceAudit(client, tableName, plan, read(partials, runId, plan.segments));
    await partials.remove(runId, plan.segments);
    return verdict(report);
  };
}

/** Logs the audit's verdict, and throws {@link LedgerBreakError} on any break. */
export function verdict({ breaks, ...summary }: AuditReport): { breaks: number } {
  const fields = {
    ...summary,
    grandTotalMinor: String(summary.grandTotalMinor),
    clearingBalanceMinor: String(summary.clearingBalanceMinor),
    issuanceBalanceMinor: String(summary.issuanceBalanceMinor),
    breaks: breaks.length,
  };
  if (breaks.length === 0) {
    logger.info('ledger audit: the books balance', fields);
    return { breaks: 0 };
  }
  // The first 100 breaks, each a line of its own: enough to find the items, bounded in size.
  for (const item of breaks.slice(0, 100)) logger.error('ledger audit: break', { ...item });
  logger.error('ledger audit: BROKEN', fields);
  throw new LedgerBreakError(`${breaks.length} ledger invariant(s) broken; see the break lines`);
}
