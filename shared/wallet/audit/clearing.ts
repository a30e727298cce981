import type { Credit } from './records.ts';
import { minorUnits } from './records.ts';

/*
 * The clearing account has no item: its balance is the credits in transit. The audit takes it at
 * the same cuts as every other account (each account's seq as the scan saw it, or read again):
 * a credit is in transit there when its payer's entry is within the payer's cut and its posting
 * is not within the recipient's. So the balance is Σ over credits of its amount if its payer's
 * entry is within the cut, less its amount if its posting is: in the credits' own terms, which the
 * audit then holds against what the entries through the clearing account leave in it.
 */

/**
 * What one credit, read at any time after the cuts were taken, paid into the clearing account and
 * posted out of it within the cuts. Seqs only grow: a payment or posting not yet within a cut when
 * the credit is read never will be.
 */
export function atTheCuts(
  credit: Credit,
  cutOf: (account: string) => number,
): { readonly paid: bigint; readonly posted: bigint } {
  const amount = minorUnits(credit.amountMinor);
  return {
    paid: credit.fromSeq <= cutOf(credit.fromAccount) ? amount : 0n,
    posted: credit.postedSeq !== undefined && credit.postedSeq <= cutOf(credit.toAccount) ? amount : 0n,
  };
}

/**
 * Per bucket of movements, the settled credits' amounts, without keeping them: paid into the
 * clearing account (every credit created before the horizon) and posted out of it (posted before
 * the horizon too). In a bucket whose movement sums balance, each of those credits has its
 * payer's entry, and each posted one its recipient's entry, among the settled entries the scan
 * folded, which lie within their accounts' cuts: so there they are what they add at the cuts.
 * A bucket that does not balance, or whose settled entries the scan did not all fold, is
 * counted credit by credit instead.
 */
export class ClearingSums {
  readonly #paid: bigint[];
  readonly #posted: bigint[];
  constructor(buckets: number) {
    this.#paid = new Array<bigint>(buckets).fill(0n);
    this.#posted = new Array<bigint>(buckets).fill(0n);
  }

  paid(bucket: number, amountMinor: unknown): void {
    this.#paid[bucket] = (this.#paid[bucket] as bigint) + minorUnits(amountMinor);
  }

  posted(bucket: number, amountMinor: unknown): void {
    this.#posted[bucket] = (this.#posted[bucket] as bigint) + minorUnits(amountMinor);
  }

  /** The buckets' amounts, paid and posted, where either is not 0: for a partial result. */
  save(): [number, bigint, bigint][] {
    const saved: [number, bigint, bigint][] = [];
    this.#paid.forEach((paid, bucket) => {
      const posted = this.#posted[bucket] as bigint;
      if (paid !== 0n || posted !== 0n) saved.push([bucket, paid, posted]);
    });
    return saved;
  }

  absorb(saved: readonly [number, bigint, bigint][]): void {
    for (const [bucket, paid, posted] of saved) {
      this.#paid[bucket] = (this.#paid[bucket] as bigint) + paid;
      this.#posted[bucket] = (this.#posted[bucket] as bigint) + posted;
    }
  }

  /** What the settled credits of every bucket not in `exact` leave in the clearing account. */
  balance(exact: ReadonlySet<number>): bigint {
    let total = 0n;
    this.#paid.forEach((paid, bucket) => {
      if (!exact.has(bucket)) total += paid - (this.#posted[bucket] as bigint);
    });
    return total;
  }
}
