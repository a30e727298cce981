import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProxiedRequest } from '#infra/local/dynamodb-faults.ts';
import { DynamoDbProxy } from '#infra/local/dynamodb-proxy.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { auditTable } from '#shared/wallet/audit/ledger-audit.ts';
import { walletKey } from '#shared/wallet/dynamodb/keys.ts';
import { inParallel } from '../support/bank.ts';
import { mentions, proxiedClient, startFaultProxy } from '../support/faults.ts';
import { createHotLedger } from '../support/ledger.ts';

/*
 * Payments into a hot wallet while its credits are posted, each posting transaction held in flight.
 * Two proxies in a row: the payments and the poster talk to `conflicts`, which raises DynamoDB's
 * transaction conflicts, in front of `faults`, which holds one of the poster's transactions before
 * DynamoDB Local. Held there, that transaction is in flight at `conflicts` for as long as the test
 * likes: every payment made meanwhile overlaps it, every run, and any item the two shared would
 * cancel the payment (docs/decisions/hot-wallets.md: a payment through the clearing account never
 * names the wallet, and the poster never names a payer's items).
 */

const faults = await startFaultProxy();
const conflicts = await DynamoDbProxy.start(faults.endpoint, { conflicts: true });
const client = proxiedClient(conflicts);
const direct = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
afterAll(async () => {
  client.destroy();
  direct.destroy();
  await conflicts.close();
});

const PAYERS = 12;

/** One transaction of the poster's, by what it writes. */
const STAGES = [
  // More than one posting's worth (49): batched, the batches posted, then completed.
  { stage: 'batches its credits', credits: 60, writes: 'SET batchId = :batch' },
  { stage: 'posts its batches on the wallet', credits: 60, writes: 'SET firstSeq = :first' },
  { stage: 'completes a batch', credits: 60, writes: 'SET completedAt = :at' },
  // A quiet wallet's few credits: one transaction on the wallet.
  { stage: 'posts its credits on one level', credits: 12, writes: 'postedBy = :by' },
] as const;

const TEST = { timeout: 60_000 };

describe('payments to a hot wallet while its credits are posted', TEST, () => {
  it.each(STAGES)(
    'each commits at its first try while the poster $stage: the two share no item',
    async ({ credits, writes }) => {
      const ledger = await createHotLedger(PAYERS, undefined, client);
      const ids: string[] = [];
      await inParallel(credits, 4, async (i) => {
        ids.push(await ledger.pay(ledger.payers[i % PAYERS] as string, 1 + (i % 7)));
      });
      let release = () => {};
      const until = new Promise<void>((resolve) => {
        release = resolve;
      });
      const held = (r: ProxiedRequest) => mentions(ledger.tableName)(r) && r.body.includes(writes);
      faults.inject({ kind: 'hold', until }, { operation: 'TransactWriteItems', when: held, times: 1 });
      const posting = ledger.post(ids);
      try {
        while (faults.requests('TransactWriteItems', held).length === 0) await sleep(5);
        conflicts.resetTouches();
        await inParallel(PAYERS, 3, async (i) => void (await ledger.pay(ledger.payers[i] as string, 3)));
        // The poster's transaction was in flight all along, and each payment's one transaction (it
        // names its payer's wallet) was written at its first try. (Held past its 2 s request
        // timeout, the poster's own next try meets its first and is cancelled: the poster's items
        // may show failed touches, never a payer's.)
        expect(conflicts.itemsInFlight()).toBeGreaterThan(0);
        for (const payer of ledger.payers) {
          expect(conflicts.touches(ledger.tableName, { pk: walletKey(payer) })).toEqual({
            writes: 1,
            failed: 0,
          });
        }
      } finally {
        release();
      }
      expect(await posting).toBe(credits);
      const quiet = await auditTable(direct, ledger.tableName);
      expect(quiet).toMatchObject({
        breaks: [],
        creditsUnposted: PAYERS,
        clearingBalanceMinor: BigInt(PAYERS * 3),
      });
    },
  );

  it('a payment DynamoDB Local answers late, as it does behind postings on a loaded machine, still pays in the send function’s time', async () => {
    // A whole-suite run once answered a payment of ledger-audit-live.test.ts "busy" with nothing
    // refused: the tests' payments had 10 s, which less a commit's worst case and the margin (9 s)
    // left them 1 s to read and write, where the send function has its 20 s timeout less those 9 s.
    const ledger = await createHotLedger(1, undefined, client);
    const [payer] = ledger.payers as [string];
    faults.inject(
      { kind: 'delay', ms: 1_500 },
      { operation: 'BatchGetItem', when: mentions(payer), times: 1 },
    );
    await ledger.pay(payer, 3);
    expect(faults.answered('BatchGetItem', mentions(payer))).toHaveLength(1);
    expect(conflicts.touches(ledger.tableName, { pk: walletKey(payer) })).toEqual({ writes: 1, failed: 0 });
  });
});
