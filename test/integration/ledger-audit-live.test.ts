import { setTimeout as sleep } from 'node:timers/promises';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { UnprocessedKeysError } from '#shared/dynamodb/retry.ts';
import { AUDIT_RETRY_POLICY } from '#shared/wallet/audit/key-reader.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { transferKey } from '#shared/wallet/dynamodb/keys.ts';
import { auditWhile, heldScanClient } from '../support/audit.ts';
import { inParallel } from '../support/bank.ts';
import { uniqueSub } from '../support/events.ts';
import { mentions, startFaultProxy } from '../support/faults.ts';
import {
  createHotLedger,
  type HotLedger,
  SEEDED_ISSUE_MINOR,
  type SeededLedger,
  seedLedger,
} from '../support/ledger.ts';
import { fund } from '../support/wallet.ts';

/*
 * The audit on a live table: movements commit while it scans. The fault proxy holds the first
 * Scan request of segment 0 until the test has made its transfers, after the other segments have
 * been read: so the scan sees some of the new items and misses others, and some accounts as they
 * were before and others after. The deposits are dated an hour ago, so they are settled (checked
 * by fingerprint) while the transfers are checked item by item.
 */

const proxy = await startFaultProxy();
const auditClient = heldScanClient(proxy);
const direct = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
afterAll(() => {
  auditClient.destroy();
  direct.destroy();
});

const HOUR_AGO = new Date(Date.now() - 3_600_000);

const WALLETS = 12;
const WALLET_MINOR = 100;

/** Twelve wallets more, funded an hour ago, each with 1.00: settled too. */
async function moreWallets(ledger: SeededLedger): Promise<string[]> {
  const wallets = Array.from({ length: WALLETS }, () => uniqueSub('live'));
  // One at a time: every deposit moves the issuance account, so parallel ones only wait for each other.
  for (const address of wallets) await fund(address, WALLET_MINOR, ledger.wallets, HOUR_AGO);
  return wallets;
}

/**
 * Twelve transfers, three at a time, of different amounts, each wallet paying once and being paid
 * once: many accounts that move once, so that the scan sees some before and some after.
 */
const traffic = (ledger: SeededLedger, wallets: readonly string[]) => () =>
  inParallel(WALLETS, 3, (i) =>
    ledger.send(wallets[i] as string, wallets[(i + 5) % WALLETS] as string, ((i + 1) / 100).toFixed(2)),
  ).then(() => undefined);

/** What a transfer adds: its two entries and its record. */
const ITEMS_PER_TRANSFER = 3;

/**
 * How many items the table holds now, counted rather than summed from what each kind of write
 * adds: the constants this replaced went stale when opening a wallet began to claim its skeleton,
 * and the bound "the scan missed some" then failed whenever the scan saw most of them.
 */
async function itemCount(tableName: string): Promise<number> {
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await direct.send(
      new ScanCommand({ TableName: tableName, Select: 'COUNT', ExclusiveStartKey }),
    );
    count += page.Count ?? 0;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return count;
}

// Each test writes a ledger of its own (deposits one at a time) before it audits it, twice.
const LEDGER_TEST = { timeout: 60_000 };

describe('the ledger audit on a live table', LEDGER_TEST, () => {
  it('finds no break when movements commit while it scans, some seen and some not', async () => {
    const ledger = await seedLedger(HOUR_AGO);
    const wallets = await moreWallets(ledger);
    const before = await itemCount(ledger.tableName);
    // The transfers start after the SDK's request timeout, as on a loaded DynamoDB Local.
    const slowTraffic = async () => {
      await sleep(2_500);
      await traffic(ledger, wallets)();
    };
    const report = await auditWhile(proxy, auditClient, ledger.tableName, slowTraffic);
    expect(report.breaks).toEqual([]);
    expect(report.grandTotalMinor).toBe(0n);
    expect(report.issuanceBalanceMinor).toBe(BigInt(-SEEDED_ISSUE_MINOR - WALLETS * WALLET_MINOR));
    // The scan saw some of the transfers' items and missed others.
    expect(report.itemsScanned).toBeGreaterThan(before);
    expect(report.itemsScanned).toBeLessThan(before + WALLETS * ITEMS_PER_TRANSFER);

    const quiet = await auditTable(direct, ledger.tableName);
    expect(quiet.breaks).toEqual([]);
    expect(quiet.accountsReread).toBe(0);
  });

  it('finds no break even when movements it counts as settled commit while it scans', async () => {
    // A horizon after the transfers: what would follow from a movement committing long after its
    // createdAt, or from an auditor's clock running ahead. Its fingerprints then miss items, and
    // reading their movements again must settle it without a false break, the grand total too.
    const ledger = await seedLedger(HOUR_AGO);
    const wallets = await moreWallets(ledger);
    const report = await auditWhile(proxy, auditClient, ledger.tableName, traffic(ledger, wallets), {
      settledBefore: new Date(Date.now() + 600_000),
    });
    expect(report.breaks).toEqual([]);
    expect(report.grandTotalMinor).toBe(0n);
  });

  it('waits out keys DynamoDB leaves unprocessed on its reads by key, then fails after its attempts rather than ask again without end', async () => {
    // A recent transfer record with no entries: the audit reads its entries by key before it names it.
    const ledger = await seedLedger();
    const transferId = `bogus-${ledger.alice}`;
    await direct.send(
      new PutCommand({
        TableName: ledger.tableName,
        Item: {
          pk: transferKey(transferId),
          kind: 'transfer',
          transferKind: 'transfer',
          transferId,
          fromAddress: ledger.alice,
          toAddress: ledger.bob,
          amountMinor: 700,
          currency: 'USD',
          createdAt: new Date().toISOString(),
          fromSeq: 9,
          toSeq: 9,
        },
      }),
    );
    proxy.inject({ kind: 'unprocessed' }, { operation: 'BatchGetItem', when: mentions(ledger.tableName) });
    await expect(auditTable(auditClient, ledger.tableName)).rejects.toMatchObject({
      cause: expect.any(UnprocessedKeysError),
    });
    expect(proxy.requests('BatchGetItem', mentions(ledger.tableName))).toHaveLength(
      AUDIT_RETRY_POLICY.attempts,
    );
  });

  it('names a settled transfer record with no entries, written while transfers run', async () => {
    const ledger = await seedLedger(HOUR_AGO);
    const wallets = await moreWallets(ledger);
    const bogus = transferKey(`bogus-${ledger.alice}`);
    await direct.send(
      new PutCommand({
        TableName: ledger.tableName,
        Item: {
          pk: bogus,
          kind: 'transfer',
          transferKind: 'transfer',
          transferId: `bogus-${ledger.alice}`,
          fromAddress: ledger.alice,
          toAddress: ledger.bob,
          amountMinor: 700,
          currency: 'USD',
          createdAt: HOUR_AGO.toISOString(),
          fromSeq: 2,
          toSeq: 2,
        },
      }),
    );
    const report = await auditWhile(proxy, auditClient, ledger.tableName, traffic(ledger, wallets));
    expect(report.breaks).toEqual([
      { invariant: 'transfer-entries', subject: bogus, detail: expect.any(String) },
    ]);
    expect(report.scans).toBe(2);
  });
});

/**
 * Twelve payments to the hot shop, three at a time, while the credit poster posts those paid so
 * far, in batches, as they come: at the end the payments of all but the last three payers are
 * posted and those three are in transit. Returns the sum left in transit.
 */
function hotTraffic(ledger: HotLedger, postable = WALLETS - 3) {
  let inTransitMinor = 0n;
  const run = async () => {
    const paid: string[] = [];
    let paying = true;
    const poster = (async () => {
      while (paying || paid.length > 0) {
        const batch = paid.splice(0);
        if (batch.length > 0) await ledger.post(batch);
        else await sleep(5);
      }
    })();
    try {
      await inParallel(WALLETS, 3, async (i) => {
        const id = await ledger.pay(ledger.payers[i] as string, i + 1);
        if (i < postable) paid.push(id);
        else inTransitMinor += BigInt(i + 1);
      });
    } finally {
      paying = false;
      await poster;
    }
  };
  return { run, inTransit: () => inTransitMinor };
}

describe('the ledger audit on a live table, payments to a hot wallet', LEDGER_TEST, () => {
  it('finds no break when payments through the clearing account commit and are posted while it scans', async () => {
    const ledger = await createHotLedger(WALLETS, HOUR_AGO);
    const traffic = hotTraffic(ledger);
    const before = await itemCount(ledger.tableName);
    const report = await auditWhile(proxy, auditClient, ledger.tableName, traffic.run);
    expect(report.breaks).toEqual([]);
    expect(report.grandTotalMinor).toBe(0n);
    // The scan saw some of the payments' items (entry, record, credit) and postings, and missed others.
    expect(report.itemsScanned).toBeGreaterThan(before);
    expect(report.itemsScanned).toBeLessThan(before + WALLETS * 3 + (WALLETS - 3));

    const quiet = await auditTable(direct, ledger.tableName);
    expect(quiet.breaks).toEqual([]);
    expect(quiet.accountsReread).toBe(0);
    expect(quiet.clearingBalanceMinor).toBe(traffic.inTransit());
    expect(quiet.creditsUnposted).toBe(3);
  });

  it('finds no break even when payments and postings it counts as settled commit while it scans', async () => {
    const ledger = await createHotLedger(WALLETS, HOUR_AGO);
    const report = await auditWhile(proxy, auditClient, ledger.tableName, hotTraffic(ledger).run, {
      settledBefore: new Date(Date.now() + 600_000),
    });
    expect(report.breaks).toEqual([]);
    expect(report.grandTotalMinor).toBe(0n);
  });

  it('finds no break when a backlog is posted on two levels while it scans, and payments go on', async () => {
    const ledger = await createHotLedger(WALLETS, HOUR_AGO);
    const ids: string[] = [];
    // More than one posting of credits holds: batched, posted and completed while the audit scans.
    await inParallel(WALLETS * 5, 4, async (i) => {
      ids.push(await ledger.pay(ledger.payers[i % WALLETS] as string, 1 + (i % 7)));
    });
    const report = await auditWhile(proxy, auditClient, ledger.tableName, async () => {
      await Promise.all([
        ledger.post(ids).then((posted) => expect(posted).toBe(WALLETS * 5)),
        inParallel(WALLETS, 3, async (i) => void (await ledger.pay(ledger.payers[i] as string, 3))),
      ]);
    });
    expect(report.breaks).toEqual([]);
    expect(report.grandTotalMinor).toBe(0n);
    const quiet = await auditTable(direct, ledger.tableName);
    expect(quiet).toMatchObject({
      breaks: [],
      creditsUnposted: WALLETS,
      clearingBalanceMinor: BigInt(WALLETS * 3),
    });
  });

  it('dates a posting by when it was written: a backlog paid an hour ago, posted while it scans, needs no second scan', async () => {
    // A poster that was down: the credits were paid an hour ago (settled), half of them posted
    // then and half only now, while the audit scans. Their recipient's entries say the payment's
    // createdAt; the audit must take them as the recent items they are, not as settled ones.
    const ledger = await createHotLedger(WALLETS, new Date(HOUR_AGO.getTime() - 1_000));
    const ids: string[] = [];
    for (const payer of ledger.payers) ids.push(await ledger.pay(payer, 7, { at: HOUR_AGO }));
    await ledger.post(ids.slice(0, WALLETS / 2), new Date(HOUR_AGO.getTime() + 1_000));
    const report = await auditWhile(proxy, auditClient, ledger.tableName, async () => {
      expect(await ledger.post(ids.slice(WALLETS / 2))).toBe(WALLETS / 2);
    });
    expect(report.breaks).toEqual([]);
    expect(report.grandTotalMinor).toBe(0n);
    expect(report.scans).toBe(1);
    const quiet = await auditTable(direct, ledger.tableName);
    expect(quiet).toMatchObject({ breaks: [], clearingBalanceMinor: 0n, creditsUnposted: 0, scans: 1 });
  });
});
