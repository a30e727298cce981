import { depositKey, transferKey } from '../dynamodb/keys.ts';
import type { Broken } from './breaks.ts';
import type { Fingerprint } from './fingerprints.ts';
import type { KeyReader } from './key-reader.ts';
import { addSums, sumsToText } from './partial.ts';
import type { Item } from './records.ts';

/*
 * A deposit's claim on its id (DEPOSIT#<depositId>) is what makes a funding run at most once: the
 * deposit's transaction writes it beside the deposit's transfer record, on condition that the id
 * is new (shared/wallet/dynamodb/deposit-store.ts). So every deposit transfer has exactly one
 * claim, at the key of its depositId, naming it; and every claim names a deposit transfer that
 * names its id back. A deposit whose claim is gone could be funded again by a re-run; a claim
 * with no deposit stops one that never happened.
 *
 * Like the movements, settled claims and deposit records are folded into two fingerprint sums per
 * bucket (by transfer id), never kept: equal in every bucket exactly when each side states the same
 * pairs. Recent ones (written since the horizon) are kept and checked by key; so are the settled
 * ones of a bucket that does not add up, which a second scan finds (ledger-audit.ts).
 */

/** A claim or deposit transfer, as compared: the deposit's id, its transfer, its wallet, its amount. */
interface DepositPair {
  readonly depositId: string;
  readonly transferId: string;
  readonly address: string;
  readonly amountMinor: unknown;
}

/** What a child of a segmented audit found of deposits and claims (shared/wallet/audit/partial.ts). */
export interface SavedDepositClaims {
  readonly sums: readonly string[];
  readonly claims: readonly (readonly [string, DepositPair])[];
  readonly deposits: readonly (readonly [string, DepositPair])[];
}

const CLAIM = 0;
const DEPOSIT = 1;

/** A claim states the id of its own key: one stored under another key is not the claim of its id. */
const claimOf = (item: Item): DepositPair => ({
  depositId: String(item.pk).slice(depositKey('').length),
  transferId: String(item.transferId),
  address: String(item.address),
  amountMinor: item.amountMinor,
});

const depositOf = (item: Item): DepositPair => ({
  depositId: String(item.depositId),
  transferId: String(item.transferId),
  address: String(item.toAddress),
  amountMinor: item.amountMinor,
});

const statement = (pair: DepositPair) =>
  JSON.stringify(['deposit', pair.depositId, pair.transferId, pair.address, pair.amountMinor]);

/** Whether an item is a deposit's claim or a deposit's transfer record. */
export const isDepositItem = (item: Item): boolean =>
  item.kind === 'deposit' || (item.kind === 'transfer' && item.transferKind === 'deposit');

export class DepositClaims {
  readonly #sums: [BigUint64Array, BigUint64Array];
  readonly #bucketOf: (transferId: unknown) => number;
  readonly #claims = new Map<string, DepositPair>();
  readonly #deposits = new Map<string, DepositPair>();

  constructor(buckets: number, bucketOf: (transferId: unknown) => number) {
    this.#bucketOf = bucketOf;
    this.#sums = [new BigUint64Array(buckets), new BigUint64Array(buckets)];
  }

  /** Files a claim or deposit transfer the scan found: folded when `settled`, else kept. */
  consider(fp: Fingerprint, item: Item, settled: boolean): void {
    if (!settled) {
      this.keep(item);
      return;
    }
    const claim = item.kind === 'deposit';
    const pair = claim ? claimOf(item) : depositOf(item);
    const sums = this.#sums[claim ? CLAIM : DEPOSIT];
    const bucket = this.#bucketOf(pair.transferId);
    // A BigUint64Array keeps its elements mod 2^64.
    sums[bucket] = (sums[bucket] as bigint) + fp.of(statement(pair));
  }

  /** Keeps a claim or deposit transfer to be checked by key. */
  keep(item: Item): void {
    if (item.kind === 'deposit') this.#claims.set(String(item.pk), claimOf(item));
    else this.#deposits.set(String(item.pk), depositOf(item));
  }

  /** The sums and the kept claims and deposits, for a partial result. */
  save(): SavedDepositClaims {
    return { sums: this.#sums.map(sumsToText), claims: [...this.#claims], deposits: [...this.#deposits] };
  }

  absorb({ sums, claims, deposits }: SavedDepositClaims): void {
    this.#sums.forEach((into, side) => {
      addSums(into, sums[side] as string);
    });
    for (const [key, pair] of claims) this.#claims.set(key, pair);
    for (const [key, pair] of deposits) this.#deposits.set(key, pair);
  }

  /** The buckets whose claims and deposits differ. */
  unbalanced(): Set<number> {
    const [claims, deposits] = this.#sums;
    const found = new Set<number>();
    claims.forEach((sum, bucket) => {
      if (sum !== deposits[bucket]) found.add(bucket);
    });
    return found;
  }

  /**
   * Checks every kept claim and deposit against the other, read by key (strongly consistent: the
   * two commit together, so one that exists has the other readable), and names each that has no
   * match: `deposit-unclaimed` for a deposit, `deposit-claim-orphan` for a claim.
   */
  async check(reader: KeyReader, broken: Broken): Promise<void> {
    const claimKeys = [...this.#deposits.values()].map((d) => depositKey(d.depositId));
    const depositKeys = [...this.#claims.values()].map((c) => transferKey(c.transferId));
    const claims = await reader.read(claimKeys.filter((key) => !this.#claims.has(key)));
    const deposits = await reader.read(depositKeys.filter((key) => !this.#deposits.has(key)));
    const claimAt = (key: string) => {
      const item = claims.get(key);
      return this.#claims.get(key) ?? (item?.kind === 'deposit' ? claimOf(item) : undefined);
    };
    const depositAt = (key: string) => {
      const item = deposits.get(key);
      return this.#deposits.get(key) ?? (item && isDepositItem(item) ? depositOf(item) : undefined);
    };
    const same = (a: DepositPair, b: DepositPair | undefined) =>
      b !== undefined && statement(a) === statement(b);
    for (const [key, deposit] of this.#deposits) {
      const claim = claimAt(depositKey(deposit.depositId));
      if (!same(deposit, claim)) {
        broken(
          'deposit-unclaimed',
          key,
          `deposit ${deposit.depositId} has ${claim ? 'a claim that states another deposit' : 'no claim'} at ${depositKey(deposit.depositId)}: a re-run of it would fund it again`,
        );
      }
    }
    for (const [key, claim] of this.#claims) {
      if (!same(claim, depositAt(transferKey(claim.transferId)))) {
        broken(
          'deposit-claim-orphan',
          key,
          `it claims its id for transfer ${claim.transferId}, which is not this deposit: the claim stops a deposit that never moved money`,
        );
      }
    }
  }
}
