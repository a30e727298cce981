/**
 * `npm run wallet:audit [-- --segments <n>]`: proves the wallet books balance. Checks every
 * invariant of the double-entry ledger (shared/wallet/audit/ledger-audit.ts): each balance equals the
 * sum of its entries and its last running balance, each transfer has exactly its two matching
 * entries (or, through the clearing account, its payer's entry and either its credit in transit
 * or its one posting), the clearing account holds exactly the credits in transit, the grand
 * total is zero, no balance is negative except the issuance account's. Prints a one-line JSON
 * summary, then one line per break; read-only. With `--segments N`, as the deployed audit's state
 * machine runs it: N children in worker threads, each scanning one Scan segment, then the reducer
 * (infra/local/audit-workers.ts); without, the same children in this process, 4 of them.
 *
 * Exit codes: 0 the books balance; 1 at least one break (each named); 2 invalid arguments, the
 * table could not be read, or anything else failed before the audit answered.
 *
 * By default it audits the local stack that `npm start` runs: the one on PORT when set, else
 * the only one running, and says which. With
 * `--table <name> [--region <r>] [--endpoint <url>]` it audits a deployed table (or another
 * DynamoDB Local table) with the default AWS credentials.
 */
import { parseArgs } from 'node:util';
import { auditInWorkers } from '#infra/local/audit-workers.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { TABLE_OPTIONS, walletsTableOf } from './wallets-table.ts';

const USAGE = `Usage: npm run wallet:audit -- [--segments <1-64>] [--table <table> [--region <region>] [--endpoint <url>]]`;

/** Segments of the audit in this process when `--segments` is not given. */
const DEFAULT_SEGMENTS = 4;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      options: { ...TABLE_OPTIONS, segments: { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  const segments = Number(values.segments ?? DEFAULT_SEGMENTS);
  if (!Number.isInteger(segments) || segments < 1 || segments > 64) fail('--segments must be 1 to 64');

  const { tableName, endpoint } = await walletsTableOf(values, { doing: 'wallet:audit: auditing', fail });

  const client = createDocumentClient({ endpoint });
  const started = performance.now();
  let report: Awaited<ReturnType<typeof auditTable>>;
  try {
    report =
      values.segments === undefined
        ? await auditTable(client, tableName, { segments })
        : await auditInWorkers(client, tableName, { segments, ...(endpoint ? { endpoint } : {}) });
  } catch (error) {
    process.stderr.write(
      `wallet:audit could not read ${tableName}: ${(error as Error).name}: ${(error as Error).message}\n`,
    );
    process.exit(2);
  }
  const { breaks, ...summary } = report;
  process.stdout.write(
    `${JSON.stringify({
      table: tableName,
      segments,
      ...summary,
      grandTotalMinor: String(summary.grandTotalMinor),
      clearingBalanceMinor: String(summary.clearingBalanceMinor),
      issuanceBalanceMinor: String(summary.issuanceBalanceMinor),
      breaks: breaks.length,
      elapsedMs: Math.round(performance.now() - started),
      verdict: breaks.length === 0 ? 'the books balance' : 'BROKEN',
    })}\n`,
  );
  for (const item of breaks)
    process.stdout.write(`BREAK ${item.invariant} ${item.subject}: ${item.detail}\n`);
  client.destroy();
  process.exit(breaks.length === 0 ? 0 : 1);
}

try {
  await main();
} catch (error) {
  // Anything that fails before the audit answers (a bad PORT, an unreadable stack record) is not
  // a break of the books: 1 would tell a pager that they are broken.
  process.stderr.write(`wallet:audit: ${(error as Error).message}\n`);
  process.exit(2);
}
