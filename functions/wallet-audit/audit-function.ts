import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { logger } from '#shared/observability/telemetry.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';

/** The books do not balance: the function fails, and its Errors alarm (ledger-audit-failed) fires. */
export class LedgerBreakError extends Error {
  override readonly name = 'LedgerBreakError';
}

export interface AuditFunctionDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly segments: number;
}

/**
 * The scheduled ledger audit (EventBridge): the same audit as `npm run wallet:audit`, read-only
 * (Scan and BatchGetItem only). Logs the summary and every break, each naming its item; fails on
 * any break, so that the function's Errors metric is the alarm's signal (runbook: docs/operations.md).
 */
export function createAuditHandler({ client, tableName, segments }: AuditFunctionDependencies) {
  return async (): Promise<{ breaks: number }> => {
    const { breaks, ...summary } = await auditTable(client, tableName, { segments });
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
  };
}
