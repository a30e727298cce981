import { hash, randomBytes } from 'node:crypto';
import { addSums, sumsToText } from './partial.ts';
import { type Credit, type Entry, minorUnits, paymentOfCredit, postingOfCredit, signed } from './records.ts';

/*
 * Multiset fingerprints: what lets the audit check every entry and transfer while keeping only a
 * few numbers per account and per bucket of movements, never the items themselves.
 *
 * Two collections hold the same elements (with multiplicity) exactly when, w.h.p., the sums mod
 * 2^64 of a keyed hash of their elements are equal: the key is drawn afresh for each audit, so
 * nobody who edits the table can make two different collections sum alike but by a 2^-64 chance.
 * The sums are order-free, so items may arrive in any order, from any Scan segment.
 */

/** A keyed 64-bit hash, its key drawn for this audit only. */
export class Fingerprint {
  readonly #key: string;
  /** `key`: the audit's own, shared by every child of a segmented audit (shared/wallet/audit/partial.ts). */
  constructor(key = randomBytes(16).toString('hex')) {
    this.#key = key;
  }
  of(text: string): bigint {
    return hash('sha256', this.#key + text, 'buffer').readBigUInt64LE(0);
  }
}

/** The sum of two fingerprint sums. */
export const addFingerprints = (a: bigint, b: bigint) => BigInt.asUintN(64, a + b);
const sub = (a: bigint, b: bigint) => BigInt.asUintN(64, a - b);

/**
 * The chain of an account's entries: entry k states its balance after (b_k) and, through its
 * amount, the balance before it (d_k = b_k − amount). The chain holds when d_1 = 0, each d_k =
 * b_(k−1), and the entries are numbered 1..n without gap or repeat: exactly when the multiset of
 * what entries provide, {(0, 0)} ∪ {(k, b_k)}, equals what they ask for, {(k−1, d_k)} ∪ {(n, b_n)}.
 * (Comparing the sums of positions alone already forces the numbering: Σ(k) + 0 = Σ(k−1) + n
 * means there are n entries, and the largest, n, must be provided, so no entry lies beyond n.)
 */
export const chainTerm = (fp: Fingerprint, entry: Entry): bigint => {
  const after = minorUnits(entry.balanceAfter);
  return sub(fp.of(`${entry.seq}:${after}`), fp.of(`${entry.seq - 1}:${after - signed(entry)}`));
};

/** Whether entries whose chain terms sum to `terms` are exactly 1..`seq`, chained from 0 to `balance`. */
export const chainCloses = (fp: Fingerprint, terms: bigint, seq: number, balance: bigint): boolean =>
  addFingerprints(terms, fp.of('0:0')) === fp.of(`${seq}:${balance}`);

/**
 * Which of a movement's three items a fingerprint stands for: its out entry, in entry, record.
 * A payment through the clearing account has a credit instead of a direct in entry: the credit
 * states the payment into the clearing account on the in side (its out entry and record state it
 * too), and, once posted, the posting out of it on the out and record sides, which the
 * recipient's entry states on the in side. So the three sums agree when every such payment has
 * its payer's entry, record and credit, and every posted credit exactly its recipient's entry.
 */
export const OUT_ENTRY = 0;
export const IN_ENTRY = 1;
export const TRANSFER_RECORD = 2;
type Side = typeof OUT_ENTRY | typeof IN_ENTRY | typeof TRANSFER_RECORD;

/**
 * Per bucket of movements (by transfer id), the fingerprint sums of the movements their out
 * entries, in entries and transfer records state: equal in every bucket exactly when each
 * movement has its out entry, its in entry and its record, all agreeing. A bucket that differs
 * names the few movements to read again, 1/`buckets` of them.
 */
export class MovementSums {
  readonly #sums: [BigUint64Array, BigUint64Array, BigUint64Array];
  readonly buckets: number;
  constructor(buckets = 4096) {
    this.buckets = buckets;
    this.#sums = [new BigUint64Array(buckets), new BigUint64Array(buckets), new BigUint64Array(buckets)];
  }

  /** The bucket of a transfer id: FNV-1a, no key needed (where an item lands is no secret). */
  bucketOf(transferId: unknown): number {
    // A corrupted item may have lost its id: it still lands in a bucket, which then fails to add up.
    const id = String(transferId);
    let h = 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    return (h >>> 0) % this.buckets;
  }

  add(side: Side, transferId: unknown, fingerprint: bigint): void {
    const bucket = this.bucketOf(transferId);
    // A BigUint64Array keeps its elements mod 2^64.
    this.#sums[side][bucket] = (this.#sums[side][bucket] as bigint) + fingerprint;
  }

  /**
   * A credit's statements: the payment into the clearing account on the in side, and when its
   * posting is settled too, the posting out of it on the out and record sides.
   */
  addCredit(fp: Fingerprint, credit: Credit, withPosting: boolean): void {
    this.add(IN_ENTRY, credit.transferId, fp.of(paymentOfCredit(credit)));
    if (!withPosting) return;
    const posting = fp.of(postingOfCredit(credit));
    this.add(OUT_ENTRY, credit.transferId, posting);
    this.add(TRANSFER_RECORD, credit.transferId, posting);
  }

  /** The sums, as text for a partial result (shared/wallet/audit/partial.ts). */
  save(): string[] {
    return this.#sums.map(sumsToText);
  }

  /** Adds sums another child saved: the sums add, so the order of segments does not matter. */
  absorb(saved: readonly string[]): void {
    this.#sums.forEach((sums, side) => {
      addSums(sums, saved[side] as string);
    });
  }

  /** The buckets whose three sums differ. */
  unbalanced(): Set<number> {
    const [out, into, record] = this.#sums;
    const found = new Set<number>();
    for (let b = 0; b < this.buckets; b++) if (out[b] !== into[b] || out[b] !== record[b]) found.add(b);
    return found;
  }
}
