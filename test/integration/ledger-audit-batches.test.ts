import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { type AuditReport, auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { batchItem } from '#shared/wallet/dynamodb/batch-items.ts';
import { batchKey, creditKey, entryKey, historyShardOf, walletKey } from '#shared/wallet/dynamodb/keys.ts';
import { type BatchPosting, type CreditBatch, listingOf } from '#shared/wallet/hot-wallet/credit-batch.ts';
import { UNCOMPLETED_NAMED_AFTER_MS } from '#shared/wallet/hot-wallet/sweep-batches.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import {
  auditBoth,
  auditWhile,
  auditWhileScanned,
  heldScanClient,
  SEGMENTS,
  segmentOf,
} from '../support/audit.ts';
import { startFaultProxy } from '../support/faults.ts';
import { createHotLedger, type HotLedger } from '../support/ledger.ts';

/*
 * The audit of a hot wallet's two-level postings (shared/wallet/hot-wallet/post-credit-batches.ts), stage by
 * stage, each stage written by the credit ledger's own functions: a batch claims credits in
 * transit (no money moves), a posting takes batches into the wallet (its balance and seq include
 * their credits, whose entries are not written yet), and completing a batch writes its entries
 * and marks its credits posted. Each test seeds a ledger table of its own and audits it with a
 * horizon after everything in it (by fingerprint) and one before (item by item).
 */

const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
const proxy = await startFaultProxy();
const auditClient = heldScanClient(proxy);
afterAll(() => {
  client.destroy();
  auditClient.destroy();
});

/** The audit under each horizon, and under the default one. */
async function auditAll(tableName: string): Promise<[string, AuditReport][]> {
  return [
    ...(await auditBoth(client, tableName)),
    ['default horizon', await auditTable(client, tableName, { segments: SEGMENTS })],
  ];
}

const kinds = (report: AuditReport) => report.breaks.map((b) => b.invariant);
const HOUR_AGO = new Date(Date.now() - 3_600_000);
const now = () => new Date().toISOString();

/** Claims these credits (in transit to the shop) for one new batch, as the poster's first level does. */
async function batch(ledger: HotLedger, transferIds: readonly string[]): Promise<CreditBatch> {
  const { credits } = await ledger.wallets.credits.read(ledger.shop, transferIds);
  const made: CreditBatch = {
    batchId: randomUUID(),
    address: ledger.shop,
    credits: credits.map(listingOf),
  };
  expect(made.credits).toHaveLength(transferIds.length);
  expect(await ledger.wallets.credits.batch(made, now())).toBe('batched');
  return made;
}

/** Takes these batches into the shop's wallet in one posting (dated now): each batch with where it went. */
async function post(
  ledger: HotLedger,
  batches: readonly CreditBatch[],
  postedAt = now(),
): Promise<CreditBatch[]> {
  const { wallet } = await ledger.wallets.credits.read(ledger.shop, []);
  const result = await ledger.wallets.credits.postBatches({
    address: ledger.shop,
    wallet,
    batches,
    postedAt,
  });
  if (result.kind !== 'posted') throw new Error(`the posting was refused: ${result.kind}`);
  return batches.map((each, i) => ({ ...each, posting: result.postings[i] as BatchPosting }));
}

async function complete(ledger: HotLedger, batches: readonly CreditBatch[]): Promise<void> {
  for (const each of batches)
    expect(await ledger.wallets.credits.complete(each, now(), 'audit-test')).toBe('completed');
}

async function shopWallet(ledger: HotLedger): Promise<{ balance: number; seq: number }> {
  const { Item } = await client.send(
    new GetCommand({ TableName: ledger.tableName, Key: { pk: walletKey(ledger.shop) } }),
  );
  return Item as { balance: number; seq: number };
}

/**
 * A hot ledger funded an hour ago whose shop was paid 1.00 and 2.00, both posted the old way (one
 * transaction), then 0.03, 0.50 and 0.07 (`batched`), and 0.11 left in transit on its own.
 */
async function seedBatchedLedger() {
  const ledger = await createHotLedger(3, HOUR_AGO);
  const [first, second, third] = ledger.payers as [string, string, string];
  const posted = [await ledger.pay(first, 100), await ledger.pay(second, 200)];
  expect(await ledger.post(posted)).toBe(2);
  const batched = [await ledger.pay(third, 3), await ledger.pay(first, 50), await ledger.pay(second, 7)];
  const loose = await ledger.pay(third, 11);
  return { ...ledger, posted, batched, loose };
}

const BATCHED_MINOR = 60n;
const LOOSE_MINOR = 11n;

function expectBalanced(reports: [string, AuditReport][], clearing: bigint): void {
  for (const [path, report] of reports) {
    expect(report.breaks, path).toEqual([]);
    expect(report.grandTotalMinor, path).toBe(0n);
    expect(report.clearingBalanceMinor, path).toBe(clearing);
  }
}

// Each test writes a ledger of its own (deposits one at a time) before it audits it, three times.
const LEDGER_TEST = { timeout: 60_000 };

describe('the ledger audit of two-level postings', LEDGER_TEST, () => {
  it('finds the books balanced once credits are batched: still in transit, the clearing account holding them', async () => {
    const ledger = await seedBatchedLedger();
    await batch(ledger, ledger.batched.slice(0, 2));
    await batch(ledger, ledger.batched.slice(2));
    expectBalanced(await auditAll(ledger.tableName), BATCHED_MINOR + LOOSE_MINOR);
  });

  it('finds the books balanced once batches are posted and not completed: the wallet holds credits whose entries are not written yet', async () => {
    const ledger = await seedBatchedLedger();
    const batches = await post(ledger, [
      await batch(ledger, ledger.batched.slice(0, 2)),
      await batch(ledger, ledger.batched.slice(2)),
    ]);
    expect(await shopWallet(ledger)).toMatchObject({ balance: 360, seq: 5 });
    expectBalanced(await auditAll(ledger.tableName), LOOSE_MINOR);

    // The shop pays out of that money before the entries are written: its entry 6 is its own.
    await ledger.pay(ledger.shop, 5, { to: ledger.payers[0] });
    expect(await shopWallet(ledger)).toMatchObject({ balance: 355, seq: 6 });
    expectBalanced(await auditAll(ledger.tableName), LOOSE_MINOR);

    // One batch completed, the other not: its entries lie between written ones.
    await complete(ledger, batches.slice(0, 1));
    expectBalanced(await auditAll(ledger.tableName), LOOSE_MINOR);
  });

  it('finds the books balanced once posted batches are completed, as if their credits were posted one by one', async () => {
    const ledger = await seedBatchedLedger();
    const batches = await post(ledger, [
      await batch(ledger, ledger.batched.slice(0, 2)),
      await batch(ledger, ledger.batched.slice(2)),
    ]);
    await complete(ledger, batches);
    const reports = await auditAll(ledger.tableName);
    expectBalanced(reports, LOOSE_MINOR);
    for (const [path, report] of reports) expect(report.creditsUnposted, path).toBe(1);
  });

  it('still names the credits of a batch posted and never completed, once they are long in transit', async () => {
    const ledger = await createHotLedger(2, new Date(Date.now() - 8 * 3_600_000));
    const sevenHoursAgo = new Date(Date.now() - 7 * 3_600_000);
    const [first, second] = ledger.payers as [string, string];
    const stuck = [
      await ledger.pay(first, 7, { at: sevenHoursAgo }),
      await ledger.pay(second, 20, { at: sevenHoursAgo }),
    ];
    await post(ledger, [await batch(ledger, stuck)]);
    for (const [path, report] of await auditAll(ledger.tableName)) {
      const bySubject = [...report.breaks].sort((a, b) => a.subject.localeCompare(b.subject));
      expect(bySubject, path).toEqual(
        stuck
          .map(creditKey)
          .sort()
          .map((subject) => ({ invariant: 'credit-stuck', subject, detail: expect.any(String) })),
      );
      expect(report.grandTotalMinor, path).toBe(0n);
      expect(report.clearingBalanceMinor, path).toBe(0n);
    }
  });

  it('names a batch posted and not completed long after the sweep should have completed it, and not one it still may', async () => {
    const ledger = await seedBatchedLedger();
    const late = new Date(Date.now() - UNCOMPLETED_NAMED_AFTER_MS - 60_000).toISOString();
    const [old] = await post(ledger, [await batch(ledger, ledger.batched.slice(0, 2))], late);
    await post(ledger, [await batch(ledger, ledger.batched.slice(2))]);
    for (const [path, report] of await auditAll(ledger.tableName)) {
      expect(report.breaks, path).toEqual([
        expect.objectContaining({ invariant: 'batch-uncompleted', subject: batchKey(String(old?.batchId)) }),
      ]);
      expect(report.grandTotalMinor, path).toBe(0n);
    }
  });

  it('names the entries of a batch marked posted whose wallet never took it in: beyond the wallet', async () => {
    const ledger = await seedBatchedLedger();
    const made = await batch(ledger, ledger.batched);
    const wallet = await shopWallet(ledger);
    // What a posting that did not write the wallet would leave: the batch says where its credits
    // went, and the wallet never moved. Completing it would write entries 3..5 above seq 2.
    await client.send(
      new UpdateCommand({
        TableName: ledger.tableName,
        Key: { pk: batchKey(made.batchId) },
        UpdateExpression:
          'SET firstSeq = :first, balanceBefore = :before, postedAt = :at, historyShard = :shard, seq = :first',
        ExpressionAttributeValues: {
          ':first': wallet.seq + 1,
          ':before': wallet.balance,
          ':at': now(),
          ':shard': historyShardOf(walletAccount(ledger.shop), wallet.seq + 1),
        },
      }),
    );
    const account = walletAccount(ledger.shop);
    for (const [path, report] of await auditAll(ledger.tableName)) {
      for (const seq of [3, 4, 5]) {
        expect(report.breaks, path).toContainEqual(
          expect.objectContaining({ invariant: 'entry-orphan', subject: entryKey(account, seq) }),
        );
      }
      expect(new Set(kinds(report)), path).toEqual(new Set(['entry-orphan']));
    }
  });

  it("names a posted batch missing from its wallet's history, and a completed one still in it", async () => {
    const ledger = await seedBatchedLedger();
    const [open, done] = await post(ledger, [
      await batch(ledger, ledger.batched.slice(0, 2)),
      await batch(ledger, ledger.batched.slice(2)),
    ]);
    if (!open || !done) throw new Error('two batches');
    await complete(ledger, [done]);
    const [lost, stale] = [batchKey(open.batchId), batchKey(done.batchId)];
    // As a posting before the history read batches left it (its credits in no page), and a
    // completion that did not take it out (its credits in a page twice).
    await client.send(
      new UpdateCommand({
        TableName: ledger.tableName,
        Key: { pk: lost },
        UpdateExpression: 'REMOVE historyShard, seq',
      }),
    );
    await client.send(
      new UpdateCommand({
        TableName: ledger.tableName,
        Key: { pk: stale },
        UpdateExpression: 'SET historyShard = :shard, seq = :seq',
        ExpressionAttributeValues: {
          ':shard': historyShardOf(walletAccount(ledger.shop), 5),
          ':seq': 5,
        },
      }),
    );
    for (const [path, report] of await auditAll(ledger.tableName)) {
      const misplaced = report.breaks.filter((b) => b.invariant === 'item-misplaced');
      expect(misplaced.map((b) => b.subject).sort(), path).toEqual([lost, stale].sort());
      expect(
        kinds(report).filter((kind) => kind !== 'item-misplaced'),
        path,
      ).toEqual([]);
    }
  });

  it('names a credit that two posted batches take into the wallet: the second entry posts it again', async () => {
    const ledger = await seedBatchedLedger();
    const [once, twice] = ledger.batched as [string, string];
    const first = await batch(ledger, [once, twice]);
    // A second batch listing a credit the first holds, put without the batching transaction's
    // condition on the credit: the posting's conditions are on the batches and the wallet only.
    const second: CreditBatch = { ...first, batchId: randomUUID(), credits: first.credits.slice(1) };
    await client.send(new PutCommand({ TableName: ledger.tableName, Item: batchItem(second, now()) }));
    await post(ledger, [first, second]);
    const again = entryKey(walletAccount(ledger.shop), 5);
    for (const [path, report] of await auditAll(ledger.tableName)) {
      expect(report.breaks, path).toContainEqual(
        expect.objectContaining({ invariant: 'credit-posted-twice', subject: again }),
      );
      // Money from nothing: the wallet took one credit's money twice out of the clearing account.
      expect(kinds(report), path).toEqual(expect.arrayContaining(['clearing-balance', 'grand-total']));
      expect(kinds(report), path).not.toContain('entry-missing');
    }
  });

  it('finds the books balanced when posted batches are completed while it scans, some items seen before and some after', async () => {
    // With the default horizon (the completions' items recent) and one after them (settled).
    for (const settledBefore of [undefined, new Date(Date.now() + 600_000)]) {
      const ledger = await createHotLedger(4, HOUR_AGO);
      const paid: string[] = [];
      for (const [i, payer] of ledger.payers.entries()) {
        paid.push(await ledger.pay(payer, 10 + i), await ledger.pay(payer, 20 + i));
      }
      // Eight batches of one credit each: their items, entries and credits spread over the segments.
      const batches: CreditBatch[] = [];
      for (const id of paid) batches.push(await batch(ledger, [id]));
      const posted = await post(ledger, batches);
      const report = await auditWhile(proxy, auditClient, ledger.tableName, () => complete(ledger, posted), {
        settledBefore,
      });
      const label = settledBefore ? 'settled' : 'recent';
      expect(report.breaks, label).toEqual([]);
      expect(report.grandTotalMinor, label).toBe(0n);
      expect(report.clearingBalanceMinor, label).toBe(0n);
    }
  });

  it('finds the books balanced when posted batches are completed after the scan saw them and before it reads their credits again', async () => {
    // The scan folds each credit as in transit and derives its posting from its batch; the
    // credits read after it are posted, by a completion dated before a horizon after it (settled)
    // or after the default one (recent). Held at the answer, the race is the same every run.
    for (const settledBefore of [undefined, new Date(Date.now() + 600_000)]) {
      const ledger = await createHotLedger(4, HOUR_AGO);
      const paid: string[] = [];
      for (const [i, payer] of ledger.payers.entries()) {
        paid.push(await ledger.pay(payer, 10 + i), await ledger.pay(payer, 20 + i));
      }
      const batches: CreditBatch[] = [];
      for (const id of paid) batches.push(await batch(ledger, [id]));
      const posted = await post(ledger, batches);
      const report = await auditWhileScanned(
        proxy,
        auditClient,
        ledger.tableName,
        () => complete(ledger, posted),
        { settledBefore },
      );
      const label = settledBefore ? 'settled' : 'recent';
      expect(report.breaks, label).toEqual([]);
      expect(report.grandTotalMinor, label).toBe(0n);
      expect(report.clearingBalanceMinor, label).toBe(0n);
    }
  });

  it('finds the books balanced when batches are made and posted while it scans, and not yet completed', async () => {
    for (const settledBefore of [undefined, new Date(Date.now() + 600_000)]) {
      const ledger = await createHotLedger(4, HOUR_AGO);
      const paid: string[] = [];
      for (const [i, payer] of ledger.payers.entries()) {
        paid.push(await ledger.pay(payer, 10 + i), await ledger.pay(payer, 20 + i));
      }
      // Some batched before the audit, the others while it scans; all posted while it scans, and
      // none completed: the wallet the audit reads holds money whose entries are not written.
      const before: CreditBatch[] = [];
      for (const id of paid.slice(0, 4)) before.push(await batch(ledger, [id]));
      const report = await auditWhile(
        proxy,
        auditClient,
        ledger.tableName,
        async () => {
          const during: CreditBatch[] = [];
          for (const id of paid.slice(4)) during.push(await batch(ledger, [id]));
          await post(ledger, [...before, ...during]);
        },
        { settledBefore },
        // The shop's wallet scanned after the postings, their batches before.
        await segmentOf(client, ledger.tableName, walletKey(ledger.shop)),
      );
      const label = settledBefore ? 'settled' : 'recent';
      expect(report.breaks, label).toEqual([]);
      expect(report.grandTotalMinor, label).toBe(0n);
    }
  });
});
