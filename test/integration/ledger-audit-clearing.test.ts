import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { type AuditReport, auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { creditKey, entryKey, historyShardKey, walletKey } from '#shared/wallet/dynamodb/keys.ts';
import { CLEARING_ACCOUNT, walletAccount } from '#shared/wallet/model/accounts.ts';
import { auditBoth } from '../support/audit.ts';
import { createHotLedger, SEEDED_IN_TRANSIT_MINOR, seedHotLedger } from '../support/ledger.ts';

/*
 * The audit of payments to a hot wallet, which go through the clearing account: the payer's
 * transaction writes a credit in transit, the credit poster posts it to the wallet later. Each
 * test seeds a ledger table of its own and audits it twice: with a horizon after everything in
 * it (every movement settled: checked by fingerprint, read again only where they do not add up)
 * and with one before (every item kept and checked item by item).
 */

const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
afterAll(() => client.destroy());

const kinds = (report: AuditReport) => report.breaks.map((b) => b.invariant);

describe('the ledger audit of payments through the clearing account', () => {
  it('finds the books balanced with credits posted and in transit, the clearing account holding those in transit', async () => {
    const { tableName } = await seedHotLedger();
    for (const [path, report] of [
      ...(await auditBoth(client, tableName)),
      ['default horizon', await auditTable(client, tableName)] as const,
    ]) {
      expect(report.breaks, path).toEqual([]);
      expect(report, path).toMatchObject({
        credits: 4,
        creditsUnposted: 2,
        grandTotalMinor: 0n,
        clearingBalanceMinor: SEEDED_IN_TRANSIT_MINOR,
      });
    }
    const [[, byFingerprint]] = (await auditBoth(client, tableName)) as [[string, AuditReport]];
    expect(byFingerprint).toMatchObject({ itemsKept: 0, accountsReread: 0, fetchedAfterScan: 0, scans: 1 });
  });

  it('names a credit in transit for longer than the poster could take, and no credit posted or paid since', async () => {
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const ledger = await createHotLedger(2, hoursAgo(8));
    const [first, second] = ledger.payers as [string, string];
    const forgotten = await ledger.pay(first, 7, { at: hoursAgo(7) });
    const postedLate = await ledger.pay(second, 20, { at: hoursAgo(7) });
    // In transit too, but paid just now: not named.
    await ledger.pay(second, 30);
    expect(await ledger.post([postedLate])).toBe(1);
    for (const [path, report] of await auditBoth(client, ledger.tableName)) {
      expect(report.breaks, path).toEqual([
        { invariant: 'credit-stuck', subject: creditKey(forgotten), detail: expect.any(String) },
      ]);
      expect(report.clearingBalanceMinor, path).toBe(37n);
    }
  });

  it('names a credit in transit that was deleted: lost, and the clearing account short of it', async () => {
    const { tableName, inTransit } = await seedHotLedger();
    const gone = creditKey(inTransit[0] as string);
    await client.send(new DeleteCommand({ TableName: tableName, Key: { pk: gone } }));
    for (const [path, report] of await auditBoth(client, tableName)) {
      expect(report.breaks, path).toContainEqual(
        expect.objectContaining({ invariant: 'credit-lost', subject: gone }),
      );
      expect(report.breaks, path).toContainEqual(
        expect.objectContaining({ invariant: 'clearing-balance', subject: CLEARING_ACCOUNT }),
      );
      expect(report.clearingBalanceMinor, path).toBe(SEEDED_IN_TRANSIT_MINOR - 3n);
    }
  });

  it('names a credit posted twice: the second entry that posts it', async () => {
    const { tableName, shop } = await seedHotLedger();
    // What a poster that did not mark the credit on condition would do: post it again, the wallet
    // and its entries consistent, one credit's money twice in it.
    const wallet = (await client.send(new GetCommand({ TableName: tableName, Key: { pk: walletKey(shop) } })))
      .Item as { balance: number; seq: number };
    const first = (
      await client.send(
        new GetCommand({ TableName: tableName, Key: { pk: entryKey(walletAccount(shop), 1) } }),
      )
    ).Item as Record<string, unknown> & { amountMinor: number };
    const again = entryKey(walletAccount(shop), wallet.seq + 1);
    await client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: {
                ...first,
                pk: again,
                seq: wallet.seq + 1,
                balanceAfter: wallet.balance + first.amountMinor,
                postedAt: new Date().toISOString(),
              },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: { pk: walletKey(shop) },
              UpdateExpression: 'SET balance = :b, seq = :s',
              ExpressionAttributeValues: { ':b': wallet.balance + first.amountMinor, ':s': wallet.seq + 1 },
            },
          },
        ],
      }),
    );
    for (const [path, report] of await auditBoth(client, tableName)) {
      expect(report.breaks, path).toContainEqual(
        expect.objectContaining({ invariant: 'credit-posted-twice', subject: again }),
      );
      // Money made from nothing: the entries took more out of the clearing account than was paid in.
      expect(kinds(report), path).toEqual(expect.arrayContaining(['clearing-balance', 'grand-total']));
      expect(kinds(report), path).not.toContain('running-balance');
    }
  });

  it('names a wrong clearing balance: a credit in transit whose amount was altered', async () => {
    const { tableName, inTransit } = await seedHotLedger();
    const altered = creditKey(inTransit[1] as string);
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: altered },
        UpdateExpression: 'SET amountMinor = amountMinor + :more',
        ExpressionAttributeValues: { ':more': 1_000 },
      }),
    );
    for (const [path, report] of await auditBoth(client, tableName)) {
      expect(report.breaks, path).toContainEqual(
        expect.objectContaining({ invariant: 'clearing-balance', subject: CLEARING_ACCOUNT }),
      );
      expect(report.breaks, path).toContainEqual(
        expect.objectContaining({ invariant: 'credit-mismatch', subject: altered }),
      );
      expect(report.clearingBalanceMinor, path).toBe(SEEDED_IN_TRANSIT_MINOR + 1_000n);
      expect(kinds(report), path).not.toContain('credit-lost');
    }
  });

  it('names a credit marked posted whose entry does not exist: lost', async () => {
    const { tableName, inTransit, shop } = await seedHotLedger();
    const marked = creditKey(inTransit[0] as string);
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: marked },
        UpdateExpression: 'SET postedSeq = :seq, postedAt = :at REMOVE pendingFor',
        ExpressionAttributeValues: { ':seq': 3, ':at': new Date().toISOString() },
      }),
    );
    for (const [path, report] of await auditBoth(client, tableName)) {
      expect(report.breaks, path).toContainEqual(
        expect.objectContaining({ invariant: 'credit-lost', subject: marked }),
      );
      expect(
        report.breaks.map((b) => b.subject),
        path,
      ).not.toContain(walletKey(shop));
    }
  });

  it('names an entry where its fields do not put it: in both history indexes, under another shard key, or copied under another key', async () => {
    const { tableName, shop, payers } = await seedHotLedger();
    const account = walletAccount(shop);
    // The shop's two posted entries, each listed by its history-shards key only.
    const [inBoth, otherShard] = [entryKey(account, 1), entryKey(account, 2)];
    const set = (pk: string, name: string, value: string) =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk },
          UpdateExpression: 'SET #n = :v',
          ExpressionAttributeNames: { '#n': name },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    await set(inBoth, 'account', account);
    await set(otherShard, 'historyShard', historyShardKey(account, 99));
    const original = entryKey(walletAccount(payers[0] as string), 1);
    const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: { pk: original } }));
    const copy = `${original}#copy`;
    await client.send(new PutCommand({ TableName: tableName, Item: { ...Item, pk: copy } }));
    for (const [path, report] of await auditBoth(client, tableName)) {
      for (const subject of [inBoth, otherShard, copy]) {
        expect(report.breaks, path).toContainEqual(
          expect.objectContaining({ invariant: 'item-misplaced', subject }),
        );
      }
    }
  });
});
