import { walletAccount } from '../model/accounts.ts';
import { batchOfItem } from './batch-items.ts';
import { readItems } from './consistent-read.ts';
import { batchKey, walletKey } from './keys.ts';
import { createPendingCredits } from './pending-index.ts';
import type { WalletTableAccess } from './table-access.ts';

/** BatchGetItem's limit of keys per request. */
const KEYS_PER_READ = 100;

/**
 * Queries of the index in flight at once. Each request has its own timeout (REQUEST_TIMEOUT_MS),
 * counted while it waits for a connection or for its turn at a busy DynamoDB (locally, the stack's
 * share of DynamoDB Local among its functions): a look's 32 at once made the last ones wait past
 * it, a 503 under load. 8 at a time: 4 round trips a look where there was 1 on an idle table.
 */
const QUERIES_AT_ONCE = 8;

/** A hot wallet as one moment of the ledger saw it: posted money, and the credits not yet in it. */
export interface ExactWallet {
  readonly wallet: Record<string, unknown>;
  readonly pendingMinor: bigint;
}

/*
 * Why not the index's sum alone (issue 45, docs/decisions/hot-wallets.md, "What the balance
 * reads"): the `pending` index is read shard by shard while the poster batches credits (out of one
 * shard, into another) and posts them (out of the index, into the wallet), so its sum and any read
 * of the wallet may count a credit twice or not at all. The wallet's `seq` orders every posting:
 * a credit posted at seq n is in the balance of every read of the wallet that saw seq ≥ n, and in
 * none before. So the reader finds the credits (the index, twice), reads the wallet ONCE after,
 * and then asks the table itself, strongly consistent, where each of them stands: a credit counts
 * as pending only if it was not posted at or below the seq read. No retry, no condition, nothing a
 * posting can cancel, whatever the rate of postings.
 */
export function createExactPending(access: WalletTableAccess) {
  const index = createPendingCredits(access);

  /**
   * The wallet at `address` (read after its credits were looked for) and the exact sum of the credits
   * in transit to it at that read. Every credit paid before the call began is in exactly one of the
   * two: in the index through the first look (or, batched during it, as its batch through the
   * second; a batch leaves the index only posted, then it is in the wallet read after), and
   * counted in the wallet or the pending sum by the seq it was posted at, never both. `undefined`
   * when no wallet is open there.
   */
  async function read(address: string): Promise<ExactWallet | undefined> {
    const keys = new Set<string>();
    for (let look = 0; look < 2; look++) {
      for (const item of await index.items(address, QUERIES_AT_ONCE)) keys.add(item.pk as string);
    }
    const wallet = (await readItems(access, [walletKey(address)])).get(walletKey(address));
    if (!wallet) return undefined;
    const seq = (wallet.seq as number | undefined) ?? 0;

    const inTransit = new Map<string, bigint>();
    const settled = new Set<string>();
    const place = (transferId: string, amountMinor: unknown, postedSeq: number | undefined) => {
      if (postedSeq !== undefined && postedSeq <= seq) {
        settled.add(transferId);
        inTransit.delete(transferId);
      } else if (!settled.has(transferId)) {
        inTransit.set(transferId, BigInt(amountMinor as number));
      }
    };

    const account = walletAccount(address);
    const seenBatches = new Set<string>();
    let toRead = [...keys];
    while (toRead.length > 0) {
      const found = await readAll(access, toRead);
      const batchesToRead = new Set<string>();
      for (const item of found.values()) {
        if (item.toAccount !== account) continue;
        const batch = batchOfItem(item);
        if (batch) {
          seenBatches.add(batch.batchId);
          batch.credits.forEach((credit, i) => {
            place(credit.transferId, credit.amountMinor, batch.posting && batch.posting.firstSeq + i);
          });
        } else if (item.kind === 'credit' && typeof item.transferId === 'string') {
          const postedSeq = item.postedSeq as number | undefined;
          // Batched and not yet completed: where it stands is its batch's to say.
          if (postedSeq === undefined && typeof item.batchId === 'string') {
            if (!seenBatches.has(item.batchId)) batchesToRead.add(item.batchId);
          } else {
            place(item.transferId, item.amountMinor, postedSeq);
          }
        }
      }
      toRead = [...batchesToRead].filter((id) => !seenBatches.has(id)).map(batchKey);
      for (const id of batchesToRead) seenBatches.add(id);
    }
    let pendingMinor = 0n;
    for (const amount of inTransit.values()) pendingMinor += amount;
    return { wallet, pendingMinor };
  }

  return { read };
}

/** Items by key, strongly consistent, in as many BatchGetItem requests as the keys need. */
async function readAll(access: WalletTableAccess, keys: readonly string[]) {
  const parts = [];
  for (let start = 0; start < keys.length; start += KEYS_PER_READ) {
    parts.push(readItems(access, keys.slice(start, start + KEYS_PER_READ)));
  }
  const found = new Map<string, Record<string, unknown>>();
  for (const part of await Promise.all(parts)) for (const [key, item] of part) found.set(key, item);
  return found;
}
