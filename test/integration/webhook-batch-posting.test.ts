import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDeriveEventsHandler } from '#functions/derive-events/handler.ts';
import { startStreamPoller } from '#infra/local/stream-poller.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { entryKey } from '#shared/wallet/dynamodb/keys.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { eventKey } from '#shared/webhooks/dynamodb/event-keys.ts';
import { EVENT_SOURCE_FILTER } from '#shared/webhooks/dynamodb/ledger-facts.ts';
import { eventIdOf } from '#shared/webhooks/model/webhook-event.ts';
import { eventually } from '../support/eventually.ts';
import { createHotLedger, postBatchWithoutCompleting } from '../support/ledger.ts';

/*
 * A hot wallet's money is spendable from its batch's posting; the batch's entries are written by
 * its completion, a second transaction (at once, or by the sweep minutes later when the poster
 * stopped between the two). The merchant's transfer.completed is owed at the posting: the real
 * deriver on the ledger table's stream, through the local stream poller with the deployed filter.
 */
const env = inject('env');
const client = createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT });
const webhooksTable = env.WEBHOOKS_TABLE_NAME as string;
afterAll(() => client.destroy());

interface StoredEvent {
  readonly type: string;
  readonly timestamp: string;
  readonly data: { transferId: string; seq: number; balanceAfter: number; status: string };
}

async function storedEvent(id: string): Promise<StoredEvent | undefined> {
  const { Item } = await client.send(new GetCommand({ TableName: webhooksTable, Key: { pk: eventKey(id) } }));
  return Item && (JSON.parse(String(Item.body)) as StoredEvent);
}

describe("a hot wallet's transfer.completed events", () => {
  it('are told at the posting of their batch, not at its completion, with the seq and balance the completion writes', {
    timeout: 90_000,
  }, async () => {
    const hot = await createHotLedger(2);
    const [first, second] = hot.payers as [string, string];
    const paid = [await hot.pay(first, 4), await hot.pay(second, 5), await hot.pay(first, 6)];
    const stateDir = await mkdtemp(join(tmpdir(), 'batch-posting-'));
    const failureFile = join(stateDir, 'deriver-failures.jsonl');
    const poller = await startStreamPoller({
      endpoint: env.DYNAMODB_ENDPOINT as string,
      tableName: hot.tableName,
      invoke: createDeriveEventsHandler({
        client,
        walletsTable: hot.tableName,
        webhooksTable,
        currency: { code: 'USD', decimals: 2 },
      }),
      failureFile,
      filter: EVENT_SOURCE_FILTER,
      settings: { pollIntervalMs: 100 },
      log: () => undefined,
    });
    try {
      const postedAt = new Date().toISOString();
      const batch = await postBatchWithoutCompleting(hot, paid, postedAt);
      const [posted] = await hot.wallets.credits.readBatches([batch.batchId]);
      const firstSeq = posted?.posting?.firstSeq;
      if (posted === undefined || firstSeq === undefined) throw new Error('The batch is not posted');
      const ids = batch.credits.map((_, i) =>
        eventIdOf('transfer.completed', entryKey(walletAccount(hot.shop), firstSeq + i)),
      );
      // Nothing completes the batch: the events come from its posting alone.
      await eventually(
        async () => (await Promise.all(ids.map(storedEvent))).every((event) => event !== undefined),
        60_000,
        "the batch's transfer.completed events",
      );
      const told = await Promise.all(ids.map(storedEvent));
      let balance = 0;
      expect(told).toEqual(
        batch.credits.map((credit, i) => {
          balance += credit.amountMinor;
          return {
            type: 'transfer.completed',
            timestamp: postedAt,
            data: expect.objectContaining({
              transferId: credit.transferId,
              seq: firstSeq + i,
              balanceAfter: balance / 100,
              status: 'completed',
            }),
          };
        }),
      );

      // Completed now: its entries state the same facts, found told, and nothing fails.
      expect(await hot.wallets.credits.complete(posted, new Date().toISOString(), 'test')).toBe('completed');
      const after = await hot.pay(second, 7);
      expect(await hot.post([after])).toBe(1);
      const afterId = eventIdOf(
        'transfer.completed',
        entryKey(walletAccount(hot.shop), firstSeq + paid.length),
      );
      await eventually(
        async () => (await storedEvent(afterId)) !== undefined,
        60_000,
        'a later posting told',
      );
      expect(await Promise.all(ids.map(storedEvent))).toEqual(told);
      expect(await readFile(failureFile, 'utf8').catch(() => '')).toBe('');
    } finally {
      await poller.stop();
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
