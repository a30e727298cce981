import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { logger } from '#shared/observability/telemetry.ts';
import { eachLimited } from '#shared/util/each-limited.ts';
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

/** Partials read at once: each is an S3 GetObject of up to some MB. */
const READ_CONCURRENCY = 8;

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
    const texts: string[] = [];
    await eachLimited(
      Array.from({ length: plan.segments }, (_, segment) => segment),
      READ_CONCURRENCY,
      async (segment) => {
        texts[segment] = await partials.get(runId, segment);
      },
    );
    const report = await reduceAudit(
      client,
      tableName,
      plan,
      texts.map((text) => decodePartial<AuditPartial>(text)),
    );
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
