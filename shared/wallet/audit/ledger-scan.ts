import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ISSUANCE_ACCOUNT } from '../model/accounts.ts';
import { AccountTally, type SavedTally } from './accounts.ts';
import { PostedBatches, type SavedBatches } from './batches.ts';
import { ClearingSums } from './clearing.ts';
import { DepositClaims, isDepositItem, type SavedDepositClaims } from './deposits.ts';
import { Fingerprint, IN_ENTRY, MovementSums, OUT_ENTRY, TRANSFER_RECORD } from './fingerprints.ts';
import { LookalikeWallets, type SavedLookalikes } from './lookalikes.ts';
import type { AuditPlan } from './partial.ts';
import {
  accountOfKey,
  type Credit,
  compactCredit,
  compactEntry,
  compactTransfer,
  type Entry,
  type Item,
  minorUnits,
  misplaced,
  movementOfEntry,
  movementOfTransfer,
  Names,
  notPositive,
  type Transfer,
  UNINTERNED,
  writtenAt,
} from './records.ts';
import { scanTable } from './scan.ts';
import { StuckCredits } from './stuck-credits.ts';

/*
 * The audit's main course, one Scan segment at a time: each item is filed as it arrives. An item
 * written before the horizon is settled: its entries are folded into their account's chain
 * fingerprint, and all its items into its bucket's movement sums; no item is kept. Items written
 * since are kept as compact records, to be checked item by item (ledger-audit.ts).
 *
 * Everything filed either adds (counts, fingerprint sums, amounts) or is a record under its own
 * key, so a scan splits into segments and what each found adds up: a child of a segmented audit
 * scans one segment and returns {@link AuditPartial}; the reducer absorbs every child's into one
 * LedgerScan, which then holds exactly what one scan of the whole table would have
 * (docs/decisions/segmented-audit.md).
 */

/** What one child found in its Scan segment: JSON text once encoded (shared/wallet/audit/partial.ts). */
export interface AuditPartial {
  readonly segment: number;
  readonly counts: Counts;
  readonly sums: readonly string[];
  readonly clearing: readonly [number, bigint, bigint][];
  readonly deposits: SavedDepositClaims;
  readonly tallies: readonly (readonly [string, SavedTally])[];
  readonly keptEntries: readonly (readonly [string, Entry])[];
  readonly keptTransfers: readonly (readonly [string, Transfer])[];
  readonly keptCredits: readonly (readonly [string, Credit])[];
  readonly foldedUnposted: readonly string[];
  readonly stuck: readonly string[];
  readonly batches: SavedBatches;
  readonly lookalikes: SavedLookalikes;
  readonly misplaced: readonly (readonly [string, string])[];
  readonly notPositive: readonly (readonly [string, string])[];
}

interface Counts {
  itemsScanned: number;
  accounts: number;
  entries: number;
  transfers: number;
  credits: number;
  creditsUnposted: number;
}

/** The scan's state: what the checks after it need, in memory that grows with accounts, not entries. */
export class LedgerScan {
  readonly horizon: number;
  readonly fp: Fingerprint;
  readonly names = new Names();
  readonly sums = new MovementSums();
  readonly clearing = new ClearingSums(this.sums.buckets);
  readonly deposits = new DepositClaims(this.sums.buckets, (transferId) => this.sums.bucketOf(transferId));
  readonly tallies = new Map<string, AccountTally>();
  /** Entries and transfers written since the horizon, by key. */
  readonly keptEntries = new Map<string, Entry>();
  readonly keptTransfers = new Map<string, Transfer>();
  /** Credits created or posted since the horizon, by key: their item changes when posted. */
  readonly keptCredits = new Map<string, Credit>();
  /**
   * Credits folded in without their posting (in transit, or posted since the horizon), by id: as
   * many as are in transit. One of them read again after the scan may be posted, and dated before
   * the horizon, by a posting that committed after the scan passed it: the settled sums lack it.
   */
  readonly foldedUnposted = new Set<string>();
  readonly counts: Counts = {
    itemsScanned: 0,
    accounts: 0,
    entries: 0,
    transfers: 0,
    credits: 0,
    creditsUnposted: 0,
  };
  readonly stuck: StuckCredits;
  readonly batches = new PostedBatches();
  readonly lookalikes = new LookalikeWallets();
  /** Items not where their fields put them, with why: few, as each is a break. */
  readonly misplacedItems: [string, string][] = [];
  /** Items whose amount is not positive, with it: few, as each is a break. */
  readonly notPositiveItems: [string, string][] = [];

  constructor({ key, horizon, startedAt }: AuditPlan) {
    this.horizon = horizon;
    this.fp = new Fingerprint(key);
    this.stuck = new StuckCredits(startedAt);
  }

  /** Settled once written before the horizon: for a posting's items, when it was posted. */
  readonly settled = (item: Item): boolean => writtenAt(item) < this.horizon;
  readonly createdSettled = (item: Item): boolean => Date.parse(item.createdAt as string) < this.horizon;

  tally(account: string): AccountTally {
    const found = this.tallies.get(account);
    if (found) return found;
    const created = new AccountTally();
    this.tallies.set(account, created);
    return created;
  }

  /** Files one scanned item. */
  file(item: Item): void {
    const { counts, fp, sums } = this;
    counts.itemsScanned++;
    const pk = item.pk as string;
    const account = accountOfKey(pk);
    if (item.kind === 'entry' || item.kind === 'transfer' || item.kind === 'credit') {
      const wrong = misplaced(item);
      if (wrong) this.misplacedItems.push([pk, wrong]);
      const amount = notPositive(item);
      if (amount) this.notPositiveItems.push([pk, amount]);
    } else if (item.kind === 'batch') {
      const wrong = misplaced(item);
      if (wrong) this.misplacedItems.push([pk, wrong]);
    }
    if (isDepositItem(item)) this.deposits.consider(fp, item, this.createdSettled(item));
    if (account) {
      counts.accounts++;
      const state = this.tally(account);
      state.cut = (item.seq as number | undefined) ?? 0;
      state.balance = minorUnits(item.balance ?? 0);
      if (account !== ISSUANCE_ACCOUNT) this.lookalikes.consider(account.slice('W#'.length));
    } else if (item.kind === 'entry') {
      counts.entries++;
      if (!this.settled(item)) this.keptEntries.set(pk, compactEntry(item, this.names));
      else {
        const entry = compactEntry(item, UNINTERNED);
        this.tally(entry.account).fold(fp, entry);
        sums.add(
          entry.direction === 'out' ? OUT_ENTRY : IN_ENTRY,
          entry.transferId,
          fp.of(movementOfEntry(entry)),
        );
      }
    } else if (item.kind === 'transfer') {
      counts.transfers++;
      const transfer = compactTransfer(item);
      if (!this.settled(item)) this.keptTransfers.set(pk, transfer);
      else sums.add(TRANSFER_RECORD, transfer.transferId, fp.of(movementOfTransfer(transfer)));
    } else if (item.kind === 'credit') {
      counts.credits++;
      if (item.postedSeq === undefined) {
        counts.creditsUnposted++;
        this.stuck.consider(item);
        this.batches.unposted(item);
      }
      this.#fileCredit(item);
    } else if (item.kind === 'batch') this.batches.consider(item);
  }

  /**
   * A credit: its payment into the clearing account is settled once created before the horizon,
   * its posting once posted before it. Only a credit paid before the horizon is folded in; one
   * paid or posted since is kept. One paid before and still in transit is folded, not kept,
   * however old: should it be posted while the scan runs, its recipient's entry is a recent one,
   * kept and checked against the credit read again.
   */
  #fileCredit(item: Item): void {
    const paidSettled = this.createdSettled(item);
    const postedSettled = item.postedSeq !== undefined && this.settled(item);
    if (!paidSettled || (item.postedSeq !== undefined && !postedSettled)) {
      this.keptCredits.set(item.pk as string, compactCredit(item, this.names));
    }
    if (!paidSettled) return;
    const credit = compactCredit(item, UNINTERNED);
    const bucket = this.sums.bucketOf(credit.transferId);
    this.sums.addCredit(this.fp, credit, postedSettled);
    this.clearing.paid(bucket, credit.amountMinor);
    if (postedSettled) this.clearing.posted(bucket, credit.amountMinor);
    else this.foldedUnposted.add(credit.transferId);
  }

  /** What this scan found, as one child returns it. */
  save(segment: number): AuditPartial {
    return {
      segment,
      counts: this.counts,
      sums: this.sums.save(),
      clearing: this.clearing.save(),
      deposits: this.deposits.save(),
      tallies: [...this.tallies],
      keptEntries: [...this.keptEntries],
      keptTransfers: [...this.keptTransfers],
      keptCredits: [...this.keptCredits],
      foldedUnposted: [...this.foldedUnposted],
      stuck: this.stuck.save(),
      batches: this.batches.save(),
      lookalikes: this.lookalikes.save(),
      misplaced: this.misplacedItems,
      notPositive: this.notPositiveItems,
    };
  }

  /** Adds what a child found in its segment. */
  absorb(partial: AuditPartial): void {
    for (const [name, count] of Object.entries(partial.counts)) this.counts[name as keyof Counts] += count;
    this.sums.absorb(partial.sums);
    this.clearing.absorb(partial.clearing);
    this.deposits.absorb(partial.deposits);
    for (const [account, tally] of partial.tallies) this.tally(account).absorb(tally);
    const { names } = this;
    for (const [key, entry] of partial.keptEntries) {
      this.keptEntries.set(key, {
        ...entry,
        account: names.intern(entry.account),
        counterpartyAccount: names.intern(entry.counterpartyAccount),
        ...(entry.counterpartyAddress === undefined
          ? {}
          : { counterpartyAddress: names.intern(entry.counterpartyAddress) }),
      });
    }
    for (const [key, transfer] of partial.keptTransfers) this.keptTransfers.set(key, transfer);
    for (const [key, credit] of partial.keptCredits) {
      this.keptCredits.set(key, {
        ...credit,
        fromAccount: names.intern(credit.fromAccount),
        toAccount: names.intern(credit.toAccount),
      });
    }
    for (const id of partial.foldedUnposted) this.foldedUnposted.add(id);
    this.stuck.absorb(partial.stuck);
    this.batches.absorb(partial.batches);
    this.lookalikes.absorb(partial.lookalikes);
    this.misplacedItems.push(...partial.misplaced.map(([key, why]): [string, string] => [key, why]));
    this.notPositiveItems.push(...partial.notPositive.map(([key, why]): [string, string] => [key, why]));
  }
}

/** The child of a segmented audit: scans segment `segment` of the plan's and returns what it found. */
export async function scanSegment(
  client: DynamoDBDocumentClient,
  tableName: string,
  plan: AuditPlan,
  segment: number,
): Promise<AuditPartial> {
  const scan = new LedgerScan(plan);
  await scanTable(client, tableName, { segment, of: plan.segments }, (item) => scan.file(item));
  return scan.save(segment);
}
