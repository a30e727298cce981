import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { LedgerBreakError } from '#functions/wallet-audit/audit-function.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { creditKey } from '#shared/wallet/dynamodb/keys.ts';
import { runScheduledAudit } from '../support/audit.ts';
import {
  misstateBobsPayment,
  SEEDED_IN_TRANSIT_MINOR,
  SEEDED_ISSUE_MINOR,
  type SeededLedger,
  seedHotLedger,
  seedLedger,
} from '../support/ledger.ts';

const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
let ledger: SeededLedger;
let tableName: string;

/** `npm run wallet:audit` on this file's table (or another): its exit code and output. */
async function auditCommand(table = tableName): Promise<{ code: number; stdout: string }> {
  const args = [
    'scripts/wallet-audit.ts',
    '--table',
    table,
    '--endpoint',
    process.env.DYNAMODB_ENDPOINT as string,
  ];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [
      ...args,
      '--region',
      'us-east-1',
      '--segments',
      '3',
    ]);
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

beforeAll(async () => {
  ledger = await seedLedger();
  tableName = ledger.tableName;
});

describe('the ledger audit', () => {
  it('finds the books balanced: every invariant holds, the grand total is 0, issuance is minus all issued', async () => {
    const report = await auditTable(client, tableName, { segments: 3 });
    expect(report.breaks).toEqual([]);
    expect(report).toMatchObject({ accounts: 4, transfers: 7, entries: 14, grandTotalMinor: 0n });
    expect(report.issuanceBalanceMinor).toBe(BigInt(-SEEDED_ISSUE_MINOR));
    expect(await runScheduledAudit(client, tableName, 2)).toEqual({ breaks: 0, partialsLeft: 0 });
    const command = await auditCommand();
    expect(command.code).toBe(0);
    expect(JSON.parse(command.stdout.split('\n')[0] as string)).toMatchObject({
      verdict: 'the books balance',
      breaks: 0,
    });
  });

  it('fails, naming the entry, once one entry is corrupted', async () => {
    const corrupted = await misstateBobsPayment(client, ledger);
    const report = await auditTable(client, tableName, { segments: 2 });
    const named = report.breaks.filter((b) => b.subject === corrupted).map((b) => b.invariant);
    expect(named).toEqual(expect.arrayContaining(['running-balance', 'entry-unpaired', 'transfer-mismatch']));
    expect(report.breaks.map((b) => b.invariant)).toContain('balance-vs-entries');

    // The scheduled function fails, which is what its alarm watches.
    await expect(runScheduledAudit(client, tableName, 2)).rejects.toThrow(LedgerBreakError);
    const command = await auditCommand();
    expect(command.code).toBe(1);
    expect(command.stdout).toContain(`BREAK running-balance ${corrupted}`);
    expect(JSON.parse(command.stdout.split('\n')[0] as string).verdict).toBe('BROKEN');
  });

  it('reports the clearing account, and names a credit in transit gone missing, the command and the scheduled function alike', async () => {
    const hot = await seedHotLedger();
    const quiet = await auditCommand(hot.tableName);
    expect(quiet.code).toBe(0);
    expect(JSON.parse(quiet.stdout.split('\n')[0] as string)).toMatchObject({
      verdict: 'the books balance',
      clearingBalanceMinor: String(SEEDED_IN_TRANSIT_MINOR),
      credits: 4,
    });
    expect(await runScheduledAudit(client, hot.tableName, 2)).toEqual({ breaks: 0, partialsLeft: 0 });

    const gone = creditKey(hot.inTransit[0] as string);
    await client.send(new DeleteCommand({ TableName: hot.tableName, Key: { pk: gone } }));
    const command = await auditCommand(hot.tableName);
    expect(command.code).toBe(1);
    expect(command.stdout).toContain(`BREAK credit-lost ${gone}`);
    expect(command.stdout).toContain('BREAK clearing-balance CLEARING');
    await expect(runScheduledAudit(client, hot.tableName, 2)).rejects.toThrow(LedgerBreakError);
  });

  it('exits 2, not 1 (a break), when it fails before it audits: a PORT that is not a port', async () => {
    const run = promisify(execFile)(process.execPath, ['scripts/wallet-audit.ts'], {
      env: { ...process.env, PORT: 'not-a-port' },
    });
    await expect(run).rejects.toMatchObject({ code: 2, stdout: '' });
  });
});
