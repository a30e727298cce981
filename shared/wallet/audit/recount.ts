import type { AuditBreak, Broken } from './breaks.ts';
import { type Fingerprint, IN_ENTRY, MovementSums, OUT_ENTRY, TRANSFER_RECORD } from './fingerprints.ts';
import {
  compactCredit,
  compactEntry,
  compactTransfer,
  type Entry,
  type Item,
  movementOfEntry,
  movementOfTransfer,
  UNINTERNED,
} from './records.ts';

/*
 * A bucket of settled movements whose sums differ is scanned again, and its movements are checked
 * item by item to name the break. Most often the second look names an item; when it names none,
 * the sums may still differ: a difference the item-by-item check has no rule for (dates that put
 * a movement's items on both sides of the horizon, say). A bucket that stays unbalanced is a
 * break all the same, named as such. The second scan folds the bucket's settled items again as the
 * first did: a bucket that differed only because a movement committed while the first scan ran
 * adds up now, and is no break.
 */
export class BucketRecount {
  readonly #sums: MovementSums;
  readonly #fp: Fingerprint;
  readonly #unbalanced: ReadonlySet<number>;
  readonly #items = new Map<number, number>();
  readonly #settled: (item: Item) => boolean;
  readonly #createdSettled: (item: Item) => boolean;

  /** `unbalanced`: the buckets of `sums` that did not add up in the first scan. */
  constructor(
    fp: Fingerprint,
    sums: MovementSums,
    unbalanced: ReadonlySet<number>,
    settled: (item: Item) => boolean,
    createdSettled: (item: Item) => boolean,
  ) {
    this.#settled = settled;
    this.#createdSettled = createdSettled;
    this.#fp = fp;
    this.#sums = new MovementSums(sums.buckets);
    this.#unbalanced = unbalanced;
  }

  /** Folds an entry, transfer or credit of the second scan as the first scan did, if its bucket is recounted. */
  consider(item: Item): void {
    const bucket = this.#sums.bucketOf(item.transferId);
    if (!this.#unbalanced.has(bucket)) return;
    const sums = this.#sums;
    const fp = this.#fp;
    if (item.kind === 'credit') {
      if (!this.#createdSettled(item)) return;
      sums.addCredit(
        fp,
        compactCredit(item, UNINTERNED),
        item.postedSeq !== undefined && this.#settled(item),
      );
    } else if (!this.#settled(item)) return;
    else if (item.kind === 'entry') {
      const entry = compactEntry(item, UNINTERNED);
      sums.add(
        entry.direction === 'out' ? OUT_ENTRY : IN_ENTRY,
        entry.transferId,
        fp.of(movementOfEntry(entry)),
      );
    } else if (item.kind === 'transfer') {
      sums.add(TRANSFER_RECORD, item.transferId, fp.of(movementOfTransfer(compactTransfer(item))));
    } else return;
    this.#items.set(bucket, (this.#items.get(bucket) ?? 0) + 1);
  }

  /**
   * Names every recounted bucket that still does not add up and of whose movements no break names
   * an item (`breaks`; an entry's movement is found with `entryAt`).
   */
  name(breaks: readonly AuditBreak[], entryAt: (key: string) => Entry | undefined, broken: Broken): void {
    const blamed = new Set<number>();
    for (const { subject } of breaks) {
      const id = /^(?:TRANSFER|CREDIT)#(.+)$/.exec(subject)?.[1] ?? entryAt(subject)?.transferId;
      if (id !== undefined) blamed.add(this.#sums.bucketOf(id));
    }
    for (const bucket of this.#sums.unbalanced()) {
      if (!this.#unbalanced.has(bucket) || blamed.has(bucket)) continue;
      broken(
        'bucket-unbalanced',
        `bucket ${bucket}`,
        `the settled out entries, in entries and records of its movements (${this.#items.get(bucket) ?? 0} items, scanned twice) state different movements, and no item of them breaks a rule checked item by item`,
      );
    }
  }
}
