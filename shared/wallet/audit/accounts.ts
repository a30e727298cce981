import { accountKey, entryKey } from '../dynamodb/keys.ts';
import { ISSUANCE_ACCOUNT } from '../model/accounts.ts';
import type { Broken } from './breaks.ts';
import { addFingerprints, chainCloses, chainTerm, type Fingerprint } from './fingerprints.ts';
import type { KeyReader } from './key-reader.ts';
import {
  clearingShare,
  compactEntry,
  type Entry,
  type Item,
  minorUnits,
  type Names,
  signed,
} from './records.ts';

/**
 * What the audit keeps of one account while it scans: the account item as the scan saw it, and
 * the entries it folded into a fingerprint instead of keeping them. A few numbers, whatever the
 * account's history: the audit's memory grows with accounts, not with entries.
 */
export class AccountTally {
  /** The account item's seq as scanned (its "cut"); -1 while the scan has not seen it. */
  cut = -1;
  balance = 0n;
  /** Entries folded in: how many, the highest seq and its balance after, their chain terms' sum. */
  folded = 0;
  top = 0;
  topBalance = 0n;
  terms = 0n;
  /**
   * What the folded entries add to the clearing account (paid into it, less posted out of it):
   * valid while every folded entry lies within the account's cut, zeroed when the account is read
   * again from an entry at or below them (its entries are then kept, and counted from there).
   */
  clearing = 0n;

  /**
   * Adds what another child's scan found of the same account (a segmented audit): its entries lie
   * in any segment, its item in one.
   */
  absorb(other: SavedTally): void {
    if (other.cut >= 0) {
      this.cut = other.cut;
      this.balance = other.balance;
    }
    this.folded += other.folded;
    this.terms = addFingerprints(this.terms, other.terms);
    this.clearing += other.clearing;
    if (other.top > this.top) {
      this.top = other.top;
      this.topBalance = other.topBalance;
    }
  }

  fold(fp: Fingerprint, entry: Entry): void {
    this.folded++;
    this.terms = addFingerprints(this.terms, chainTerm(fp, entry));
    this.clearing += clearingShare(entry);
    if (entry.seq > this.top) {
      this.top = entry.seq;
      this.topBalance = minorUnits(entry.balanceAfter);
    }
  }
}

/** An account's tally as a child of a segmented audit returns it (shared/wallet/audit/partial.ts). */
export type SavedTally = Pick<
  AccountTally,
  'cut' | 'balance' | 'folded' | 'top' | 'topBalance' | 'terms' | 'clearing'
>;

/** Where an account's entries are proven to chain up to: seq and balance after (0, 0: nothing). */
export interface Prefix {
  readonly seq: number;
  readonly balance: bigint;
}

/**
 * The longest run of entries 1..p the scan saw and the fingerprints prove chained, from the
 * folded entries and the ones kept (`kept`, ascending by seq). The folded ones (settled, so
 * committed before the scan began) sit at or below p; kept ones beyond p (committed while the
 * scan ran) left a gap the scan passed too early, so the audit reads from p + 1 on by key. When the
 * entries up to p do not chain, it proves nothing (0): the account is read again from its start.
 */
export function provenPrefix(tally: AccountTally, kept: readonly Entry[], fp: Fingerprint): Prefix {
  let count = tally.folded;
  let i = 0;
  while (i < kept.length && (kept[i] as Entry).seq <= tally.top) {
    count++;
    i++;
  }
  let end: { seq: number; balance: bigint; kept: number } | undefined =
    count === tally.top ? { seq: tally.top, balance: tally.topBalance, kept: i } : undefined;
  for (; i < kept.length; i++) {
    const entry = kept[i] as Entry;
    count++;
    if (count === entry.seq) end = { seq: entry.seq, balance: minorUnits(entry.balanceAfter), kept: i + 1 };
  }
  if (!end) return { seq: 0, balance: 0n };
  let terms = tally.terms;
  for (let k = 0; k < end.kept; k++) terms = addFingerprints(terms, chainTerm(fp, kept[k] as Entry));
  return chainCloses(fp, terms, end.seq, end.balance)
    ? { seq: end.seq, balance: end.balance }
    : { seq: 0, balance: 0n };
}

/**
 * Whether an account must be read on by key after the scan: unless the scan saw its item exactly
 * at the proven prefix, and no entry it saw, folded or kept (ascending by seq), lies above that
 * prefix. A folded entry above it (one the chain could not vouch for, behind a gap) may lie beyond
 * the item's cut too: the account's clearing share drops it, but the clearing sums of its
 * movement's bucket, which balanced, count it as within the cut. Read on, the entries are kept and
 * the cut moves past them. The case: an item the scan saw at seq 0, before the account's first
 * entry, matches the prefix 0 whatever the scan folded of its later entries. A kept entry above
 * the cut committed after the scan saw the item, or belongs to no movement of the account at all;
 * only the item read again tells which.
 */
export const mustReadOn = (tally: AccountTally, prefix: Prefix, kept: readonly Entry[]): boolean =>
  tally.cut !== prefix.seq ||
  tally.balance !== prefix.balance ||
  tally.top > prefix.seq ||
  (kept.at(-1)?.seq ?? 0) > tally.cut;

/** A balance no account may hold: below zero for a wallet, above zero for the issuance account. */
export const impossibleBalance = (account: string, balance: bigint): string | undefined => {
  if (account === ISSUANCE_ACCOUNT) {
    return balance > 0n ? `the issuance account holds ${balance}, more than nothing` : undefined;
  }
  return balance < 0n ? `balance ${balance}` : undefined;
};

/**
 * Missing entries in a row after which an account's read stops: a seq far beyond its entries
 * (a corrupted account item) is one break, not billions of reads.
 */
const MISSING_RUN = 1_000;

/**
 * An account the scan cannot vouch for (it moved while the scan ran, or something is broken),
 * given its item as read again after the scan (`item`, consistent; `undefined`: there is none)
 * and the entries of it the scan kept (`kept`, ascending by seq): its entries after the proven prefix, read in order by key, each checked against the running
 * balance, so that every break is named. The entries read are kept for the movement checks and
 * the grand total; `state` ends at the account as read now.
 */
export async function readAccountOn(
  account: string,
  item: Item | undefined,
  state: AccountTally,
  prefix: Prefix,
  kept: readonly Entry[],
  {
    reader,
    names,
    broken,
    keptEntries,
  }: {
    reader: KeyReader;
    names: Names;
    broken: Broken;
    keptEntries: Map<string, Entry>;
  },
): Promise<void> {
  const key = accountKey(account);
  if (!item) {
    // Entries of no account: name those the scan saw, and those it left a gap for below them.
    const last = Math.min(
      Math.max(state.top, kept.at(-1)?.seq ?? 0),
      state.folded + kept.length + MISSING_RUN,
    );
    for (const [entry] of await reader.read(seqs(account, 1, last))) {
      broken('entry-orphan', entry, `no account ${account}`);
    }
    state.cut = -1;
    return;
  }
  const seq = (item.seq as number | undefined) ?? 0;
  const balance = minorUnits(item.balance ?? 0);
  let from = prefix;
  if (seq < prefix.seq) {
    broken('entry-orphan', entryKey(account, prefix.seq), `${key} is at seq ${seq}, below its entries`);
    from = { seq: 0, balance: 0n };
    state.clearing = 0n;
  }
  let running = from.balance;
  let missingRun = 0;
  reading: for (let start = from.seq + 1; start <= seq; start += 100) {
    const end = Math.min(seq, start + 99);
    const found = await reader.read(seqs(account, start, end));
    for (let k = start; k <= end; k++) {
      const entryItem = found.get(entryKey(account, k));
      if (!entryItem) {
        broken('entry-missing', entryKey(account, k), `${key} is at seq ${seq} but has no entry ${k}`);
        if (++missingRun === MISSING_RUN) {
          broken('entry-missing', key, `no entries ${k - MISSING_RUN + 1}..${k}: the rest to ${seq} unread`);
          break reading;
        }
        continue;
      }
      missingRun = 0;
      const entry = compactEntry(entryItem, names);
      // Kept and checked item by item like the recent ones: the scan may have missed it, and then
      // no fingerprint holds it (an account read from entry 1 is a broken one, or one whose
      // settled entries the scan did not all see; either way few).
      keptEntries.set(entryKey(account, k), entry);
      running += signed(entry);
      if (minorUnits(entry.balanceAfter) !== running) {
        broken(
          'running-balance',
          entryKey(account, k),
          `balanceAfter ${entry.balanceAfter} but the entries up to it sum to ${running}`,
        );
      }
    }
  }
  if (running !== balance) {
    broken('balance-vs-entries', key, `balance ${balance} but its ${seq} entries sum to ${running}`);
  }
  // The item read now holds every entry the scan saw: a movement commits its entries with its
  // accounts. One beyond it, behind a gap, is no movement of the account, and takes the place a
  // later movement of it will need, which then can never commit.
  const beyond = new Set(kept.filter((entry) => entry.seq > seq).map((entry) => entry.seq));
  if (state.top > seq) beyond.add(state.top);
  if (seq < prefix.seq) beyond.delete(prefix.seq); // named above
  for (const k of beyond) {
    broken('entry-orphan', entryKey(account, k), `${key} is at seq ${seq}, below this entry`);
  }
  state.cut = seq;
  state.balance = balance;
}

/** The keys of an account's entries `from`..`to`. */
function* seqs(account: string, from: number, to: number): Generator<string> {
  for (let k = from; k <= to; k++) yield entryKey(account, k);
}
