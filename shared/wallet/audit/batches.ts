import { entriesOfBatch } from '../dynamodb/batch-items.ts';
import { batchOfItem } from '../dynamodb/batch-reader.ts';
import { batchKey, creditKey, entryItem, entryKey } from '../dynamodb/keys.ts';
import type { CreditBatch } from '../hot-wallet/credit-batch.ts';
import type { Broken } from './breaks.ts';
import type { KeyReader } from './key-reader.ts';
import { compactEntry, type Entry, type Item, type Names } from './records.ts';

/*
 * A hot wallet's two-level postings (docs/decisions/hot-wallets.md, "Two levels") leave one state
 * the rest of the audit would call broken: a batch posted into its wallet and not yet completed.
 * The wallet's balance and seq include the batch's credits, but their entries are not written and
 * the credits are not marked posted until the batch's completing transaction, which writes exactly
 * what `entriesOfBatch` derives from the batch item. So the audit derives them too and treats them
 * as that transaction's items: the audit then proves the ledger the completion will leave, and a
 * batch that cannot complete into a consistent ledger is named by the invariants a posting of
 * credits one by one would break. Batching alone moves no money (its credits stay in transit) and
 * a completed batch has its real items: neither needs anything here.
 */

/** The batches a child of a segmented audit saw posted and not completed, and the credits and batches it saw not posted, by recipient. */
export interface SavedBatches {
  readonly posted: readonly Item[];
  readonly unposted: readonly (readonly [string, readonly string[]])[];
}

/** The posting of one credit as its batch's completion will mark it. */
interface DerivedPosting {
  readonly batchId: string;
  readonly postedSeq: number;
  readonly postedAt: string;
}

/**
 * The batches posted and not completed, found by the scan or read again after it: only those are
 * kept, and they are few (a batch is completed a transaction after its posting, unless its poster
 * stopped in between).
 */
export class PostedBatches {
  readonly #batches = new Map<string, CreditBatch>();
  /** The items of the batches the scan kept, as scanned: what a partial result carries. */
  readonly #items = new Map<string, Item>();
  /** One set of derived items, which later derivations add to: readers made before see them too. */
  readonly #derived = new DerivedItems();
  readonly #derivedIds = new Set<string>();
  /** Keys of the credits and batches the scan saw not posted, by recipient: as many as are in transit. */
  readonly #unposted = new Map<string, string[]>();

  /** Notes a batch item the scan found. */
  consider(item: Item): void {
    if (item.firstSeq === undefined) this.unposted(item);
    else this.#keep(item);
  }

  /** Notes a credit or batch the scan found not posted: a batch may take it into its wallet before the audit reads that. */
  unposted(item: Item): void {
    const account = String(item.toAccount);
    const keys = this.#unposted.get(account) ?? [];
    if (keys.length === 0) this.#unposted.set(account, keys);
    keys.push(String(item.pk));
  }

  #keep(item: Item): void {
    if (item.firstSeq === undefined || item.completedAt !== undefined) return;
    const batch = parsed(item);
    if (!batch?.posting) return;
    this.#batches.set(batch.batchId, batch);
    this.#items.set(batch.batchId, item);
  }

  /** What the scan noted, for a partial result (shared/wallet/audit/partial.ts). */
  save(): SavedBatches {
    return { posted: [...this.#items.values()], unposted: [...this.#unposted] };
  }

  /** Notes what another child's scan noted. */
  absorb({ posted, unposted }: SavedBatches): void {
    for (const item of posted) this.#keep(item);
    for (const [account, keys] of unposted) {
      const known = this.#unposted.get(account);
      if (known) known.push(...keys);
      else this.#unposted.set(account, [...keys]);
    }
  }

  /**
   * Reads again, once `accounts` have been read after the scan, the credits and batches to them the
   * scan saw not posted, and the batches those credits are in now: a posting those accounts show,
   * of a batch the scan passed before it was posted (or before it existed), committed before this
   * read, so it is found here. Without it, a wallet read after such a posting and before its
   * completion lacked the entries of its newest credits, for an audit while payments flow. Only the
   * accounts read again can show such a posting: their entries did not reach their seq in the scan.
   */
  async catchUp(reader: KeyReader, accounts: Iterable<string>): Promise<void> {
    const now = await reader.read([...accounts].flatMap((account) => this.#unposted.get(account) ?? []));
    this.#unposted.clear();
    const batchKeys = new Set<string>();
    for (const item of now.values()) {
      if (item.kind === 'batch') this.#keep(item);
      else if (item.postedSeq === undefined && typeof item.batchId === 'string') {
        if (!now.has(batchKey(item.batchId))) batchKeys.add(batchKey(item.batchId));
      }
    }
    for (const item of (await reader.read(batchKeys)).values()) this.#keep(item);
  }

  /**
   * Names the batches posted before `before` (epoch ms) and still not completed when read again:
   * the sweep (shared/wallet/hot-wallet/sweep-batches.ts) completes one within minutes of its
   * posting, so one this old is a batch it could not complete (a ledger not as the posting left
   * it, or the sweep not running). Its credits are named too once long in transit (credit-stuck).
   */
  async nameUncompleted(reader: KeyReader, before: number, broken: Broken): Promise<void> {
    const old = [...this.#batches.values()].filter(
      (batch) => Date.parse(batch.posting?.postedAt ?? '') < before,
    );
    const now = await reader.read(old.map((batch) => batchKey(batch.batchId)));
    for (const batch of old) {
      const item = now.get(batchKey(batch.batchId));
      if (item && item.completedAt === undefined) {
        broken(
          'batch-uncompleted',
          batchKey(batch.batchId),
          `posted into ${batch.address}'s wallet at ${batch.posting?.postedAt} and not completed since: the sweep could not write its entries; see the sweep's log (runbook, docs/operations.md)`,
        );
      }
    }
  }

  /**
   * The items the batches' completions will write, dated now, or at the audit's `horizon` (epoch
   * ms) if later: so that they are kept and checked item by item, never counted as settled. The
   * entries are filed among those the scan kept (`keptEntries`), where it kept none at their key:
   * a batch completed while the scan ran wrote the same items, dated otherwise, and those stand.
   * Their credits need no filing: each such entry has its credit read by key unless it is known
   * posted (`checkMovements`), through {@link DerivedItems.reader}, so a credit the scan kept
   * unposted does not hide its posting.
   */
  derive(horizon: number, keptEntries: Map<string, Entry>, names: Names): DerivedItems {
    const at = new Date(Math.max(Date.now(), horizon)).toISOString();
    const { entries, postings } = this.#derived;
    for (const batch of this.#batches.values()) {
      const posting = batch.posting;
      if (!posting || this.#derivedIds.has(batch.batchId)) continue;
      this.#derivedIds.add(batch.batchId);
      for (const entry of entriesOfBatch(batch, posting, at)) {
        const key = entryKey(entry.account, entry.seq);
        // Two batches at one seq are broken anyway: the first one stands, the other's credits then
        // name their entries as another movement.
        if (entries.has(key)) continue;
        const item = entryItem(entry, true);
        entries.set(key, item);
        if (!keptEntries.has(key)) keptEntries.set(key, compactEntry(item, names));
        const claims = postings.get(entry.transferId) ?? [];
        if (claims.length === 0) postings.set(entry.transferId, claims);
        claims.push({ batchId: batch.batchId, postedSeq: entry.seq, postedAt: at });
      }
    }
    return this.#derived;
  }
}

/** What the completions of the batches posted and not completed will write. */
export class DerivedItems {
  readonly entries = new Map<string, Item>();
  readonly postings = new Map<string, DerivedPosting[]>();

  /**
   * `reader` answering as if the completions had committed: a missing entry key with its derived
   * entry, and a credit still unposted whose batch is one of these with its posting. Only the batch
   * the credit itself names marks it (the completion's condition): another batch that lists it
   * posts it a second time, and its entry is named for that. The stuck credits' check reads the
   * table itself: a batch posted and never completed leaves its credits in transit for good, the
   * wallet holding money its history does not show.
   */
  reader(reader: KeyReader): KeyReader {
    const { entries, postings } = this;
    return {
      async read(keys: Iterable<string>): Promise<Map<string, Item>> {
        const asked = [...keys];
        const found = await reader.read(asked);
        for (const key of asked) {
          const item = found.get(key);
          const derived = entries.get(key);
          if (!item) {
            if (derived) found.set(key, derived);
            continue;
          }
          if (item.kind !== 'credit' || item.postedSeq !== undefined) continue;
          const claim = postings.get(String(item.transferId))?.find((p) => p.batchId === item.batchId);
          if (claim && key === creditKey(String(item.transferId))) {
            found.set(key, { ...item, postedSeq: claim.postedSeq, postedAt: claim.postedAt });
          }
        }
        return found;
      },
      get fetched(): number {
        return reader.fetched;
      },
    };
  }
}

/** A batch item as a batch, its credits fit to derive entries from; `undefined` when it is not (broken). */
function parsed(item: Item): CreditBatch | undefined {
  try {
    const batch = batchOfItem(item);
    const fit = (credit: CreditBatch['credits'][number]) =>
      typeof credit?.transferId === 'string' &&
      typeof credit.fromAccount === 'string' &&
      Number.isSafeInteger(credit.fromSeq) &&
      Number.isSafeInteger(credit.amountMinor);
    return batch?.credits.every(fit) ? batch : undefined;
  } catch {
    // A balanceBefore that is no integer: the wallet's entries it would derive are named missing.
    return undefined;
  }
}
