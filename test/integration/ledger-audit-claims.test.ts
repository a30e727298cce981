import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { creditKey, depositKey, transferKey } from '#shared/wallet/dynamodb/keys.ts';
import { auditBoth, SEGMENTS } from '../support/audit.ts';
import { seedHotLedger, seedLedger } from '../support/ledger.ts';

/*
 * What the audit once let pass: deposits' claims on their ids, which it did not read, and a bucket
 * of settled movements whose sums differ while no item of it is named. Each test seeds a ledger
 * table of its own and plants one defect.
 */

const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
afterAll(() => client.destroy());

const LEDGER_TEST = { timeout: 60_000 };

/** The deposits' claims of a table: DEPOSIT#<id> items, each naming its transfer. */
async function claims(tableName: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await client.send(
    new ScanCommand({
      TableName: tableName,
      FilterExpression: '#kind = :deposit',
      ExpressionAttributeNames: { '#kind': 'kind' },
      ExpressionAttributeValues: { ':deposit': 'deposit' },
    }),
  );
  return Items;
}

describe('the ledger audit of deposits and their claims', LEDGER_TEST, () => {
  it('finds every deposit claimed once', async () => {
    const { tableName } = await seedLedger();
    expect(await claims(tableName)).toHaveLength(3);
    for (const [path, report] of await auditBoth(client, tableName)) expect(report.breaks, path).toEqual([]);
  });

  it('names a deposit whose claim is gone: a re-run would fund it again', async () => {
    const { tableName } = await seedLedger();
    const [claim] = await claims(tableName);
    await client.send(new DeleteCommand({ TableName: tableName, Key: { pk: claim?.pk } }));
    for (const [path, report] of await auditBoth(client, tableName)) {
      expect(report.breaks, path).toEqual([
        expect.objectContaining({
          invariant: 'deposit-unclaimed',
          subject: transferKey(String(claim?.transferId)),
        }),
      ]);
    }
  });

  it('names a claim with no deposit, and a second claim on one deposit', async () => {
    const { tableName } = await seedLedger();
    const [claim] = (await claims(tableName)) as [Record<string, unknown>];
    const nothing = { ...claim, depositId: randomUUID(), transferId: randomUUID() };
    const twice = { ...claim, depositId: randomUUID() };
    for (const planted of [nothing, twice]) {
      await client.send(
        new PutCommand({ TableName: tableName, Item: { ...planted, pk: depositKey(planted.depositId) } }),
      );
    }
    for (const [path, report] of await auditBoth(client, tableName)) {
      const named = report.breaks.map((b) => [b.invariant, b.subject]).sort();
      expect(named, path).toEqual(
        [
          ['deposit-claim-orphan', depositKey(nothing.depositId)],
          ['deposit-claim-orphan', depositKey(twice.depositId)],
        ].sort(),
      );
    }
  });
});

describe('the ledger audit of a bucket that does not add up', LEDGER_TEST, () => {
  it('names the bucket when its settled sums differ and no item of it can be blamed', async () => {
    const ledger = await seedHotLedger(new Date(Date.now() - 3 * 3_600_000));
    // A credit dated an hour before its payment (whose payer's entry and record are dated now):
    // the horizon between them folds the credit and keeps its siblings, which the checks by key
    // find in agreement. The bucket's sums say otherwise, and stay so when scanned again.
    const credit = creditKey(ledger.inTransit[0] as string);
    await client.send(
      new UpdateCommand({
        TableName: ledger.tableName,
        Key: { pk: credit },
        UpdateExpression: 'SET createdAt = :early',
        ExpressionAttributeValues: { ':early': new Date(Date.now() - 3_600_000).toISOString() },
      }),
    );
    const report = await auditTable(client, ledger.tableName, {
      segments: SEGMENTS,
      settledBefore: new Date(Date.now() - 1_800_000),
    });
    expect(report.breaks).toEqual([
      expect.objectContaining({
        invariant: 'bucket-unbalanced',
        subject: expect.stringMatching(/^bucket \d+$/),
      }),
    ]);
    expect(report.scans).toBe(2);
  });
});
