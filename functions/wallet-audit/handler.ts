import { requireEnv, requireIntegerEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { log } from '#shared/observability/telemetry.ts';
import { auditTable } from '#shared/wallet/ledger-audit.ts';

/** The books do not balance: the function fails, and its Errors alarm (LedgerAuditFailed) fires. */
export class LedgerBreakError extends Error {
  override readonly name = 'LedgerBreakError';
}

const client = createDocumentClient();
const tableName = requireEnv(tables.wallets.envVar);
const segments = requireIntegerEnv('AUDIT_SEGMENTS');

/**
 * The scheduled ledger audit (EventBridge): the same audit as `npm run wallet:audit`, read-only
 * (Scan and BatchGetItem only). Logs the summary and every break, each naming its item; fails on
 * any break, so that the function's Errors metric is the alarm's signal (README: runbook).
 */
export async function handler(): Promise<{ breaks: number }> {
  const report = await auditTable(client, tableName, segments);
  const { breaks, ...summary } = report;
  const fields = {
    ...summary,
    grandTotalMinor: String(summary.grandTotalMinor),
    issuanceBalanceMinor: String(summary.issuanceBalanceMinor),
    breaks: breaks.length,
  };
  if (breaks.length === 0) {
    log('INFO', 'ledger audit: the books balance', fields);
    return { breaks: 0 };
  }
  // The first 100 breaks, each a line of its own: enough to find the items, bounded in size.
  for (const item of breaks.slice(0, 100)) log('ERROR', 'ledger audit: break', { ...item });
  log('ERROR', 'ledger audit: BROKEN', fields);
  throw new LedgerBreakError(`${breaks.length} ledger invariant(s) broken; see the break lines`);
}
