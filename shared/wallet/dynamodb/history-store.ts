import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import type { HistoryStore, MovementRecord, PendingCredit } from '../history/ports.ts';
import { walletAccount } from '../model/accounts.ts';
import type { EntryRecord } from '../model/entry.ts';
import type { Matching } from '../model/matching.ts';
import { entriesOfBatch } from './batch-items.ts';
import { batchOfItem } from './batch-reader.ts';
import { readItems } from './consistent-read.ts';
import { stillInTransit } from './credits-in-transit.ts';
import {
  batchKey,
  creditKey,
  entryKey,
  entryOfItem,
  HISTORY_INDEX,
  HISTORY_SHARD_INDEX,
  HISTORY_SHARDS,
  historyShardKey,
  inboundKey,
  transferKey,
} from './keys.ts';
import { createPendingCredits } from './pending-index.ts';
import type { WalletTableAccess } from './table-access.ts';

/** The reads of an account's history and of one movement. */
export function createHistoryStore(access: WalletTableAccess): HistoryStore {
  const { client, tableName } = access;
  const pending = createPendingCredits(access);

  /**
   * Up to `limit` items of one key of `index`, newest first, from `seq` `atOrBelow` down when given,
   * as entries: a posted batch's item as the entries its completion will write.
   */
  async function query(index: string, keyName: string, key: string, limit: number, atOrBelow?: number) {
    const { Items } = await withRetries(() =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index,
          KeyConditionExpression: atOrBelow === undefined ? '#k = :k' : '#k = :k AND seq <= :s',
          ExpressionAttributeNames: { '#k': keyName },
          ExpressionAttributeValues: { ':k': key, ...(atOrBelow === undefined ? {} : { ':s': atOrBelow }) },
          ScanIndexForward: false,
          Limit: limit,
        }),
      ),
    );
    return (Items ?? []).flatMap((item) => {
      const batch = batchOfItem(item);
      if (!batch) return [entryOfItem(item)];
      // Between its posting and its completion, with the audit's derivation (shared/wallet/audit/
      // batches.ts): the balance already holds these credits, and the pending index no longer.
      if (!batch.posting || batch.completedAt !== undefined) return [];
      const entries = entriesOfBatch(batch, batch.posting, batch.posting.postedAt);
      return atOrBelow === undefined ? entries : entries.filter((entry) => entry.seq <= atOrBelow);
    });
  }

  /**
   * Up to `limit` entries of `address`'s wallet, newest first, from `seq` `atOrBelow` down when
   * given; on the first page (no `atOrBelow`), also its newest `limit` credits in transit. ONE Query
   * of the `history` index beside ONE read of the wallet's hot marker. A wallet ever marked hot has
   * its posted credits' entries in the `history-shards` index, and those credits in transit in the
   * `pending` index: then one Query per shard of each, merged by `seq`. The credits in transit are
   * read first, the posted entries after them, as the balance reads them (`balance-store.ts`): a
   * credit posted between the two reads is then in both, never in neither (read at once, it could
   * be in neither), and the caller lists it once. A batch posted and not completed is in the
   * `history-shards` index at its first seq (credit-store.ts), read as its credits' entries.
   */
  async function page(
    address: string,
    limit: number,
    atOrBelow?: number,
  ): Promise<{ entries: EntryRecord[]; pending: PendingCredit[] }> {
    const account = walletAccount(address);
    const [own, marker] = await Promise.all([
      query(HISTORY_INDEX, 'account', account, limit, atOrBelow),
      readItems(access, [inboundKey(address)]),
    ]);
    if (marker.size === 0) return { entries: own, pending: [] };
    // An entry's shard is its seq modulo the shard count, and a page is `limit` consecutive seqs:
    // no shard holds more than its share of them; and a batch, keyed at its first seq, at most one
    // more, the one whose credits run from below the page into it.
    const perShard = Math.ceil(limit / HISTORY_SHARDS) + 1;
    const pendingCredits = atOrBelow === undefined ? await pending.newest(address, limit) : [];
    const posted = await Promise.all(
      Array.from({ length: HISTORY_SHARDS }, (_, n) =>
        query(HISTORY_SHARD_INDEX, 'historyShard', historyShardKey(account, n), perShard, atOrBelow),
      ),
    );
    // A batch's completion takes its item out of the index and puts its entries in: a replica may
    // show both for a moment, alike, and the page lists them once.
    const entries = [...own, ...posted.flat()]
      .sort((a, b) => b.seq - a.seq)
      .filter((entry, i, sorted) => sorted[i - 1]?.seq !== entry.seq)
      .slice(0, limit);
    return { entries, pending: pendingCredits };
  }

  /**
   * One movement by id and its credit's state, strongly consistent: ONE BatchGetItem (and one for
   * its credit's batch between a posting and its completion).
   */
  async function movement(transferId: string): Promise<MovementRecord | undefined> {
    const found = await readItems(access, [transferKey(transferId), creditKey(transferId)]);
    const item = found.get(transferKey(transferId));
    if (!item) return undefined;
    const inTransit =
      item.via === 'clearing' && (await stillInTransit(access, [transferId], found)).has(transferId);
    return {
      ...(item as unknown as MovementRecord),
      transferKind: (item.transferKind as 'deposit' | undefined) ?? 'transfer',
      status: inTransit ? 'pending' : 'completed',
    };
  }

  /**
   * Which of these transfers' credits are still in transit: ONE BatchGetItem (none for no ids; and
   * one for their batches between a posting and its completion).
   */
  async function creditsInTransit(transferIds: readonly string[]): Promise<Set<string>> {
    if (transferIds.length === 0) return new Set();
    return stillInTransit(access, transferIds, await readItems(access, transferIds.map(creditKey)));
  }

  /**
   * The `reference` and `metadata` of these transfers, for entries that do not carry them (a posted
   * credit's): ONE BatchGetItem of their transfer items, those two attributes only (none for no ids).
   */
  async function matching(transferIds: readonly string[]): Promise<Map<string, Matching>> {
    const found = new Map<string, Matching>();
    if (transferIds.length === 0) return found;
    const items = await readItems(access, transferIds.map(transferKey), {
      projection: {
        // The key too: the read files what it finds by it.
        ProjectionExpression: '#pk, #id, #r, #m',
        ExpressionAttributeNames: { '#pk': 'pk', '#id': 'transferId', '#r': 'reference', '#m': 'metadata' },
      },
    });
    for (const item of items.values()) found.set(item.transferId as string, item as Matching);
    return found;
  }

  /**
   * The account's entry numbered `seq`: ONE BatchGetItem, strongly consistent. Given the transfer
   * the entry should be of, also the credit's entry that a batch posted and not completed holds
   * (no entry item yet): the same read takes the credit, and one more its batch.
   */
  async function entryAt(
    address: string,
    seq: number,
    transferId?: string,
  ): Promise<EntryRecord | undefined> {
    const key = entryKey(walletAccount(address), seq);
    const keys = transferId === undefined ? [key] : [key, creditKey(transferId)];
    const found = await readItems(access, keys);
    const item = found.get(key);
    if (item) return entryOfItem(item);
    const batchId = transferId === undefined ? undefined : found.get(creditKey(transferId))?.batchId;
    if (typeof batchId !== 'string') return undefined;
    const batch = batchOfItem((await readItems(access, [batchKey(batchId)])).get(batchKey(batchId)));
    if (batch?.posting === undefined || batch.address !== address) return undefined;
    return entriesOfBatch(batch, batch.posting, batch.posting.postedAt).find(
      (entry) => entry.seq === seq && entry.transferId === transferId,
    );
  }

  return { page, entryAt, movement, creditsInTransit, matching };
}
