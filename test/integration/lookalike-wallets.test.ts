import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { type RunningStack, stackRecordPath } from '#infra/local/stack-record.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { walletKey } from '#shared/wallet/dynamodb/keys.ts';
import { claimSkeletons } from '#shared/wallet/dynamodb/skeleton-claims.ts';
import { createLedgerTable } from '../support/wallet.ts';

/*
 * Issue 45.4 on a table whose wallets were opened before openings claimed their skeleton: the
 * audit names two that look alike, and the one-off pass gives each wallet its claim, the older of
 * two lookalikes keeping it, so that no third one opens.
 */

const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });

/** A wallet as an opening wrote it before skeletons were claimed. */
const openedBefore = (tableName: string, address: string, openedAt: string) =>
  client.send(
    new PutCommand({
      TableName: tableName,
      Item: { pk: walletKey(address), kind: 'wallet', balance: 0, seq: 0, openedAt },
    }),
  );

describe('wallets opened before skeletons were claimed', () => {
  it('are named by the audit when two look alike, and claimed by the one-off pass, the older keeping its skeleton', async () => {
    const { tableName, wallets } = await createLedgerTable();
    const digits = `7${randomInt(10 ** 9, 10 ** 10)}`;
    const [latin, cyrillic, other] = [`pace${digits}`, `\u0440\u0430\u0441\u0435${digits}`, `dave${digits}`];
    await openedBefore(tableName, cyrillic, '2026-11-02T00:00:00.000Z');
    await openedBefore(tableName, latin, '2026-11-01T00:00:00.000Z');
    await openedBefore(tableName, other, '2026-11-03T00:00:00.000Z');

    const audit = await auditTable(client, tableName, { segments: 2 });
    expect(audit.breaks).toEqual([
      {
        invariant: 'lookalike-wallets',
        subject: expect.stringMatching(new RegExp(`^WALLET#(${latin}|${cyrillic})$`)),
        detail: expect.stringMatching(new RegExp(`"(${latin}|${cyrillic})"`)),
      },
    ]);

    const expected = { wallets: 3, held: 2, lookalikes: [{ address: cyrillic, holder: latin }] };
    expect(await claimSkeletons({ client, tableName })).toEqual(expected);
    // Run again, it claims nothing new and names the same pair.
    expect(await claimSkeletons({ client, tableName })).toEqual(expected);
    // The claims hold: a third spelling of the same skeleton opens no wallet.
    expect(await wallets.openWallet(`\u0440ace${digits}`, new Date().toISOString())).toBe('lookalike');
    expect(await wallets.openWallet(`dave${digits}`, new Date().toISOString())).toBe('open');
    // The longest address whose skeleton is longest in bytes (each Hangul syllable three jamo in
    // NFD) opens too: its claim's key stays within DynamoDB's 2,048 bytes.
    const longest = `${digits}${'\uD55C'.repeat(256 - digits.length)}`;
    expect(await wallets.openWallet(longest, new Date().toISOString())).toBe('open');
  });

  it('npm run wallet:claim-skeletons exits 1 naming each lookalike, 0 when every skeleton is its own', async () => {
    const { tableName } = await createLedgerTable();
    const digits = `7${randomInt(10 ** 9, 10 ** 10)}`;
    await openedBefore(tableName, `pace${digits}`, '2026-11-01T00:00:00.000Z');
    const run = () =>
      promisify(execFile)(process.execPath, [
        'scripts/wallet-claim-skeletons.ts',
        '--table',
        tableName,
        '--endpoint',
        process.env.DYNAMODB_ENDPOINT as string,
        '--region',
        'us-east-1',
      ]).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const clean = await run();
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toEqual({ wallets: 1, held: 1, lookalikes: 0 });

    await openedBefore(tableName, `\u0440\u0430\u0441\u0435${digits}`, '2026-11-02T00:00:00.000Z');
    const found = await run();
    expect(found.code).toBe(1);
    const [summary, pair] = found.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(summary).toEqual({ wallets: 2, held: 1, lookalikes: 1 });
    expect(pair).toEqual({ address: `\u0440\u0430\u0441\u0435${digits}`, holder: `pace${digits}` });
  }, 60_000);

  it('npm run wallet:claim-skeletons without --table works on the only local stack running, whatever its port, as the other wallet commands do', async () => {
    const { tableName } = await createLedgerTable();
    const digits = `7${randomInt(10 ** 9, 10 ** 10)}`;
    await openedBefore(tableName, `pace${digits}`, '2026-11-01T00:00:00.000Z');
    // The record `npm start` leaves, of a stack on a port other than PORT's default; this process
    // stands in for the stack's, alive while the command runs.
    const stateDir = await mkdtemp(join(tmpdir(), 'claim-skeletons-'));
    try {
      const stack: RunningStack = {
        baseUrl: 'http://127.0.0.1:3871',
        pid: process.pid,
        dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT as string,
        dynamodbLocalEndpoint: process.env.DYNAMODB_ENDPOINT as string,
        conflicts: false,
        env: { [tables.wallets.envVar]: tableName },
      };
      await writeFile(stackRecordPath(stateDir, 3871), JSON.stringify(stack));
      const { PORT: _port, ...env } = process.env;
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['scripts/wallet-claim-skeletons.ts'],
        { env: { ...env, LOCAL_STATE_DIR: stateDir } },
      );
      expect(JSON.parse(stdout)).toEqual({ wallets: 1, held: 1, lookalikes: 0 });
      expect(stderr).toContain('http://127.0.0.1:3871');
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  }, 60_000);
});
