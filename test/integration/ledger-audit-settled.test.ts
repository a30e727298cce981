import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { entryKey, transferKey, walletKey } from '#shared/wallet/dynamodb/keys.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { uniqueSub } from '../support/events.ts';
import { misstateBobsPayment, SEEDED_ISSUE_MINOR, seedLedger } from '../support/ledger.ts';

/*
 * The audit of settled movements (created before its horizon): their items are folded into
 * fingerprints, never kept, and a break among them is still named, by reading again only what
 * the fingerprints cannot vouch for. Each test seeds a ledger table of its own and then audits it
 * with a horizon after everything in it, so every movement counts as settled.
 */

const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
afterAll(() => client.destroy());

const allSettled = () => ({ segments: 3, settledBefore: new Date(Date.now() + 60_000) });

describe('the ledger audit of settled movements', () => {
  it('proves balanced books from fingerprints alone: no item kept, none read again, one scan', async () => {
    const { tableName } = await seedLedger();
    const report = await auditTable(client, tableName, allSettled());
    expect(report.breaks).toEqual([]);
    expect(report).toMatchObject({
      accounts: 4,
      entries: 14,
      transfers: 7,
      grandTotalMinor: 0n,
      issuanceBalanceMinor: BigInt(-SEEDED_ISSUE_MINOR),
      itemsKept: 0,
      accountsReread: 0,
      fetchedAfterScan: 0,
      scans: 1,
    });
    // The same table with its movements checked item by item comes to the same verdict.
    const itemByItem = await auditTable(client, tableName, { settledBefore: new Date(0) });
    expect(itemByItem.breaks).toEqual([]);
    expect(itemByItem.itemsKept).toBe(21);
  });

  it('names a corrupted entry, reading again only its account and its bucket of movements', async () => {
    const ledger = await seedLedger();
    const { tableName, bob } = ledger;
    const corrupted = await misstateBobsPayment(client, ledger);
    const report = await auditTable(client, tableName, allSettled());
    const named = report.breaks.filter((b) => b.subject === corrupted).map((b) => b.invariant);
    expect(named).toEqual(expect.arrayContaining(['running-balance', 'entry-unpaired', 'transfer-mismatch']));
    expect(report.breaks).toContainEqual(
      expect.objectContaining({ invariant: 'balance-vs-entries', subject: walletKey(bob) }),
    );
    expect(report.scans).toBe(2);
    expect(report.accountsReread).toBe(1);
  });

  it('names a corrupted running balance, the one entry whose chain breaks', async () => {
    const { tableName, alice } = await seedLedger();
    const corrupted = entryKey(walletAccount(alice), 2);
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: corrupted },
        UpdateExpression: 'SET balanceAfter = balanceAfter + :cent',
        ExpressionAttributeValues: { ':cent': 1 },
      }),
    );
    const report = await auditTable(client, tableName, allSettled());
    expect(report.breaks).toEqual([
      expect.objectContaining({ invariant: 'running-balance', subject: corrupted }),
    ]);
    // The amounts still pair up: no movement needed reading again.
    expect(report.scans).toBe(1);
  });

  it('names an entry gone missing, its mirror left unpaired and its transfer short of a side', async () => {
    const { tableName, carol } = await seedLedger();
    const gone = entryKey(walletAccount(carol), 2);
    const { Attributes: removed } = await client.send(
      new DeleteCommand({ TableName: tableName, Key: { pk: gone }, ReturnValues: 'ALL_OLD' }),
    );
    const report = await auditTable(client, tableName, allSettled());
    const mirror = entryKey(removed?.counterpartyAccount as string, removed?.counterpartySeq as number);
    expect(report.breaks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ invariant: 'entry-missing', subject: gone }),
        expect.objectContaining({ invariant: 'entry-unpaired', subject: mirror }),
        expect.objectContaining({
          invariant: 'transfer-entries',
          subject: transferKey(removed?.transferId as string),
        }),
      ]),
    );
  });

  it('names an entry whose amount and balance are no longer numbers and whose id is gone, rather than stopping', async () => {
    const { tableName, alice } = await seedLedger();
    const mangled = entryKey(walletAccount(alice), 3);
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: mangled },
        UpdateExpression: 'SET amountMinor = :text REMOVE balanceAfter, transferId',
        ExpressionAttributeValues: { ':text': 'two cents' },
      }),
    );
    for (const settledBefore of [allSettled().settledBefore, new Date(0)]) {
      const report = await auditTable(client, tableName, { segments: 3, settledBefore });
      const named = report.breaks.filter((b) => b.subject === mangled).map((b) => b.invariant);
      expect(named).toEqual(
        expect.arrayContaining(['running-balance', 'entry-unpaired', 'transfer-mismatch']),
      );
    }
  });

  it('names the entries of an account that does not exist', async () => {
    const { tableName, alice } = await seedLedger();
    const ghost = walletAccount(uniqueSub('ghost'));
    const orphan = entryKey(ghost, 1);
    await client.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          pk: orphan,
          kind: 'entry',
          account: ghost,
          seq: 1,
          transferId: 'made-up',
          transferKind: 'transfer',
          direction: 'in',
          amountMinor: 500,
          balanceAfter: 500,
          counterpartyAccount: walletAccount(alice),
          counterpartySeq: 1,
          currency: 'USD',
          createdAt: '2026-01-01T00:00:00.000Z',
        },
      }),
    );
    const report = await auditTable(client, tableName, allSettled());
    expect(report.breaks).toContainEqual(
      expect.objectContaining({ invariant: 'entry-orphan', subject: orphan }),
    );
  });

  it("names a movement's entries written beyond both accounts' seq, behind a gap, settled or not", async () => {
    const { tableName, alice, bob } = await seedLedger();
    const [payer, payee] = [walletAccount(alice), walletAccount(bob)];
    const seqOf = async (address: string) =>
      (await client.send(new GetCommand({ TableName: tableName, Key: { pk: walletKey(address) } }))).Item
        ?.seq as number;
    // Two past each account's seq: the slot a later movement of each needs, which then never commits.
    const [out, into] = [(await seqOf(alice)) + 3, (await seqOf(bob)) + 3];
    const movement = {
      kind: 'entry',
      transferId: 'beyond',
      transferKind: 'transfer',
      amountMinor: 700,
      currency: 'USD',
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    const items = [
      {
        ...movement,
        pk: entryKey(payer, out),
        account: payer,
        seq: out,
        direction: 'out',
        balanceAfter: 0,
        counterpartyAccount: payee,
        counterpartySeq: into,
      },
      {
        ...movement,
        pk: entryKey(payee, into),
        account: payee,
        seq: into,
        direction: 'in',
        balanceAfter: 700,
        counterpartyAccount: payer,
        counterpartySeq: out,
      },
      {
        ...movement,
        pk: transferKey('beyond'),
        kind: 'transfer',
        fromAddress: alice,
        toAddress: bob,
        fromSeq: out,
        toSeq: into,
      },
    ];
    for (const Item of items) await client.send(new PutCommand({ TableName: tableName, Item }));
    for (const settledBefore of [allSettled().settledBefore, new Date(0)]) {
      const report = await auditTable(client, tableName, { segments: 3, settledBefore });
      for (const subject of [entryKey(payer, out), entryKey(payee, into)]) {
        expect(report.breaks).toContainEqual(expect.objectContaining({ invariant: 'entry-orphan', subject }));
      }
    }
  });

  it('names a wallet whose balance went below zero', async () => {
    const { tableName, carol } = await seedLedger();
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: walletKey(carol) },
        UpdateExpression: 'SET balance = :minus',
        ExpressionAttributeValues: { ':minus': -1 },
      }),
    );
    const report = await auditTable(client, tableName, allSettled());
    expect(report.breaks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ invariant: 'negative-balance', subject: walletKey(carol) }),
        expect.objectContaining({ invariant: 'balance-vs-entries', subject: walletKey(carol) }),
      ]),
    );
  });
});
