import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { eachLimited } from '../../util/each-limited.ts';
import { accountKey } from '../dynamodb/keys.ts';
import { UNCOMPLETED_NAMED_AFTER_MS } from '../hot-wallet/sweep-batches.ts';
import { CLEARING_ACCOUNT, ISSUANCE_ACCOUNT } from '../model/accounts.ts';
import {
  type AccountTally,
  impossibleBalance,
  mustReadOn,
  type Prefix,
  provenPrefix,
  readAccountOn,
} from './accounts.ts';
import type { AuditBreak, Broken } from './breaks.ts';
import { atTheCuts } from './clearing.ts';
import { isDepositItem } from './deposits.ts';
import { createKeyReader } from './key-reader.ts';
import { type AuditPartial, LedgerScan, scanSegment } from './ledger-scan.ts';
import { checkMovements, type KnownCredits } from './movements.ts';
import { type AuditPlan, planAudit } from './partial.ts';
import {
  type Credit,
  clearingShare,
  compactCredit,
  compactEntry,
  compactTransfer,
  type Entry,
  signed,
  type Transfer,
  throughClearing,
} from './records.ts';
import { BucketRecount } from './recount.ts';
import { scanTable } from './scan.ts';

export type { AuditBreak } from './breaks.ts';

/*
 * The audit of the wallet ledger: every invariant of double entry, checked on a live table, in
 * memory that grows with the number of accounts, not of entries.
 *
 * Main course: one Scan files each item as it arrives, a child per segment (ledger-scan.ts), and
 * the reducer adds up what the children found. An item written
 * before the horizon (`settledBefore`, by default SETTLING_MS before the audit starts) committed
 * before the scan began, so it is there to be seen: its entries are folded into their account's
 * chain fingerprint, and all its items into its bucket's movement sums; no item is kept. Items
 * written since are kept as compact records and checked item by item. An item is written when its
 * movement is created, but a payment to a hot wallet is credited later, when the credit poster
 * posts it: the recipient's entry and the credit's posting date from `postedAt`, not `createdAt`.
 * Then each account's chain is proven up to the last entry the scan saw without a gap, and read on
 * by key (consistent) to its current seq where the scan passed entries too early; every break is
 * named by an exact read. A bucket of movements whose sums differ is scanned again for just its
 * movements, which are checked item by item to name the break. Last, the clearing account (the
 * credits in transit) and the grand total are taken at the cuts: each account's seq as the scan
 * saw it, or as read again (docs/decisions/double-entry-ledger.md, "The clearing account").
 */

export interface AuditReport {
  readonly itemsScanned: number;
  readonly accounts: number;
  readonly entries: number;
  readonly transfers: number;
  /** Credits of payments through the clearing account, and those of them the scan saw not yet posted. */
  readonly credits: number;
  readonly creditsUnposted: number;
  /**
   * Sum of every balance, issuance and the clearing account included, net of direct movements in
   * flight: 0 when the books balance.
   */
  readonly grandTotalMinor: bigint;
  /** The clearing account's balance at the cuts: the credits in transit there. */
  readonly clearingBalanceMinor: bigint;
  /** Minus everything ever issued. */
  readonly issuanceBalanceMinor: bigint;
  /** Items written before this were checked by fingerprint; later ones item by item. */
  readonly settledBefore: string;
  /** Entries, transfers and credits kept as records (written since the horizon, or read again by key). */
  readonly itemsKept: number;
  /** Accounts read again by key: moved during the scan, or broken. */
  readonly accountsReread: number;
  /** Items read by key after the scan. */
  readonly fetchedAfterScan: number;
  /**
   * Full scans made: 2 when a bucket of settled movements (or of deposits and their claims) did
   * not balance and had to be named, or held a settled payment or posting through the clearing
   * account that the first scan missed.
   */
  readonly scans: number;
  readonly breaks: readonly AuditBreak[];
}

export interface AuditOptions {
  /** Parallel Scan segments: the children of the audit, run in this process. @default 4 */
  readonly segments?: number;
  /**
   * Items written before this are settled: checked by fingerprint (SETTLING_MS, in
   * shared/wallet/audit/partial.ts, says how long before the scan it should lie). @default
   * SETTLING_MS before now
   */
  readonly settledBefore?: Date;
}

/** Accounts read again at once after the scan: each is a short run of BatchGetItems. */
const REREAD_CONCURRENCY = 8;

/**
 * Scans and audits a table: what `npm run wallet:audit` and the tests run. The children of a
 * segmented audit, one per segment, in this process, then its reducer: the one code path the
 * deployed audit's state machine and `--segments` run too, so their verdicts cannot drift.
 */
export async function auditTable(
  client: DynamoDBDocumentClient,
  tableName: string,
  { segments = 4, settledBefore }: AuditOptions = {},
): Promise<AuditReport> {
  const plan = planAudit(segments, settledBefore);
  const partials = await Promise.all(
    Array.from({ length: segments }, (_, segment) => scanSegment(client, tableName, plan, segment)),
  );
  return reduceAudit(client, tableName, plan, partials);
}

/**
 * The reducer of a segmented audit: adds up what the children found in every segment of the
 * plan's, re-reads by key what needs an exact read, and decides.
 */
export async function reduceAudit(
  client: DynamoDBDocumentClient,
  tableName: string,
  plan: AuditPlan,
  partials: Iterable<AuditPartial> | AsyncIterable<AuditPartial>,
): Promise<AuditReport> {
  const scan = new LedgerScan(plan);
  const seen = new Set<number>();
  // One at a time: a partial is dropped once absorbed, so memory holds the sum and one partial.
  for await (const partial of partials) {
    if (seen.has(partial.segment) || partial.segment < 0 || partial.segment >= plan.segments) {
      throw new Error(`Segment ${partial.segment} of ${plan.segments} twice, or out of range`);
    }
    seen.add(partial.segment);
    scan.absorb(partial);
  }
  // An audit with a segment missing would prove a ledger it did not read.
  if (seen.size !== plan.segments) throw new Error(`${seen.size} of ${plan.segments} segments scanned`);
  const { horizon, startedAt, segments } = plan;
  const { fp, names, sums, clearing, deposits, tallies, keptEntries, keptTransfers, keptCredits } = scan;
  const { foldedUnposted, counts, stuck, batches, lookalikes, misplacedItems, notPositiveItems } = scan;
  const { settled, createdSettled } = scan;
  const tally = (account: string) => scan.tally(account);
  const settledBefore = new Date(horizon);

  const breaks: AuditBreak[] = [];
  const broken: Broken = (invariant, subject, detail) => breaks.push({ invariant, subject, detail });
  const tableReader = createKeyReader(client, tableName);
  // Batches posted and not completed read as completed: by all but the stuck check (audit/batches.ts).
  const reader = batches.derive(horizon, keptEntries, names).reader(tableReader);
  for (const [pk, wrong] of misplacedItems) broken('item-misplaced', pk, wrong);
  for (const [pk, amount] of notPositiveItems) broken('amount-not-positive', pk, amount);
  lookalikes.report(broken);

  // Each account: proven up to a prefix, then read on by key where the scan cannot vouch for it.
  const keptByAccount = new Map<string, Entry[]>();
  for (const entry of keptEntries.values()) {
    const list = keptByAccount.get(entry.account) ?? [];
    if (list.length === 0) keptByAccount.set(entry.account, list);
    list.push(entry);
    tally(entry.account);
  }
  const reread: [string, AccountTally, Prefix, Entry[]][] = [];
  for (const [account, state] of tallies) {
    const kept = (keptByAccount.get(account) ?? []).sort((a, b) => a.seq - b.seq);
    const prefix = provenPrefix(state, kept, fp);
    // Folded entries above the proven prefix are read again and kept: counted from there.
    if (prefix.seq < state.top) state.clearing = 0n;
    if (mustReadOn(state, prefix, kept)) reread.push([account, state, prefix, kept]);
  }
  keptByAccount.clear();
  // Their items now, 100 to a BatchGetItem; then each account's entries, a few accounts at a time.
  const nowItems = await tableReader.read(reread.map(([account]) => accountKey(account)));
  // And the batches posted since the scan passed them, which those items may show already.
  await batches.catchUp(
    tableReader,
    reread.map(([account]) => account),
  );
  batches.derive(horizon, keptEntries, names);
  const readOn = { reader, names, broken, keptEntries };
  await eachLimited(reread, REREAD_CONCURRENCY, ([account, state, prefix, kept]) =>
    readAccountOn(account, nowItems.get(accountKey(account)), state, prefix, kept, readOn),
  );
  nowItems.clear();
  for (const [account, state] of tallies) {
    const impossible = state.cut >= 0 ? impossibleBalance(account, state.balance) : undefined;
    if (impossible) broken('negative-balance', accountKey(account), impossible);
  }

  // Items since the horizon, item by item; and the settled ones' sums, bucket by bucket. A bucket
  // is counted item by item too when an entry through the clearing account the scan should have
  // folded was read again instead (written late, or its account broken): the clearing sums of
  // its bucket may lack that payment or posting.
  const known = await checkMovements(keptEntries, keptTransfers, keptCredits, { reader, names, broken });
  const exact = sums.unbalanced();
  const recount = new BucketRecount(fp, sums, new Set(exact), settled, createdSettled);
  for (const entry of keptEntries.values()) {
    if (throughClearing(entry) && entry.writtenAt < horizon) exact.add(sums.bucketOf(entry.transferId));
  }
  const depositsExact = deposits.unbalanced();
  const suspects = new Map<string, Entry>();
  const exactCredits: KnownCredits = new Map();
  let scans = 1;
  if (exact.size > 0 || depositsExact.size > 0) {
    scans++;
    const transfers = new Map<string, Transfer>();
    const credits = new Map<string, Credit>();
    await scanTable(client, tableName, segments, (item) => {
      if (isDepositItem(item) && createdSettled(item) && depositsExact.has(sums.bucketOf(item.transferId))) {
        deposits.keep(item);
      }
      if (item.kind !== 'entry' && item.kind !== 'transfer' && item.kind !== 'credit') return;
      if (!exact.has(sums.bucketOf(item.transferId))) return;
      recount.consider(item);
      if (item.kind === 'credit') {
        // Every credit of the bucket counts towards the clearing account; the settled ones are checked.
        const credit = compactCredit(item, names);
        exactCredits.set(credit.transferId, credit);
        if (createdSettled(item)) credits.set(item.pk as string, credit);
      } else if (!settled(item)) return;
      else if (item.kind === 'entry') suspects.set(item.pk as string, compactEntry(item, names));
      else transfers.set(item.pk as string, compactTransfer(item));
    });
    const read = await checkMovements(suspects, transfers, credits, { reader, names, broken });
    recount.name(breaks, (key) => suspects.get(key) ?? keptEntries.get(key), broken);
    for (const more of [read, known]) {
      for (const [id, credit] of more) {
        if (!exact.has(sums.bucketOf(id))) continue;
        // Read at different times after the cuts: the posted one is the newer.
        if (exactCredits.get(id)?.postedSeq === undefined) exactCredits.set(id, credit);
      }
    }
  }

  const cutOf = (account: string) => tallies.get(account)?.cut ?? 0;
  const kept = [...keptEntries.values()];

  // The clearing account at the cuts, from the credits: the settled sums of the buckets that add
  // up, then credit by credit what they do not vouch for: the credits the audit knows (created or
  // posted since the horizon, or named by an entry it kept) and every credit of the other buckets.
  let inTransit = clearing.balance(exact);
  for (const [id, credit] of known) {
    if (exact.has(sums.bucketOf(id))) continue;
    const { paid, posted } = atTheCuts(credit, cutOf);
    // What the settled sums hold of it already: its payment, and its posting if the scan folded it
    // (a posting dated before the horizon may have committed after the scan saw the credit).
    const paidSettled = credit.createdAt < horizon;
    const postedSettled =
      paidSettled &&
      credit.postedSeq !== undefined &&
      (credit.postedAt ?? Number.NaN) < horizon &&
      !foldedUnposted.has(id);
    if (!paidSettled) inTransit += paid;
    if (!postedSettled) inTransit -= posted;
  }
  for (const credit of exactCredits.values()) {
    const { paid, posted } = atTheCuts(credit, cutOf);
    inTransit += paid - posted;
  }

  // And from the entries: what those within the cuts paid into it, less what they posted out of it.
  let throughEntries = 0n;
  for (const state of tallies.values()) if (state.cut >= 0) throughEntries += state.clearing;
  for (const entry of kept) {
    if (entry.seq <= cutOf(entry.account)) throughEntries += clearingShare(entry);
  }
  if (inTransit !== throughEntries) {
    broken(
      'clearing-balance',
      CLEARING_ACCOUNT,
      `the credits in transit sum to ${inTransit}, but the entries through the clearing account leave ${throughEntries} in it`,
    );
  }

  await stuck.name(tableReader, broken);
  await batches.nameUncompleted(tableReader, startedAt - UNCOMPLETED_NAMED_AFTER_MS, broken);
  await deposits.check(tableReader, broken);

  // The grand total, at each account's cut, the clearing account's included, less the direct
  // movements with one side within the cuts and the other not. Only a movement whose items the
  // scan did not all see can be one: a kept one, or a settled one that committed while the scan
  // ran after all, whose bucket then did not add up.
  let inFlight = 0n;
  const unkept = [...suspects].filter(([key]) => !keptEntries.has(key)).map(([, entry]) => entry);
  for (const entry of [...kept, ...unkept]) {
    if (throughClearing(entry)) continue;
    if (
      entry.seq <= cutOf(entry.account) &&
      (entry.counterpartySeq ?? 0) > cutOf(entry.counterpartyAccount)
    ) {
      inFlight += signed(entry);
    }
  }
  let total = inTransit - inFlight;
  for (const state of tallies.values()) if (state.cut >= 0) total += state.balance;
  if (total !== 0n) broken('grand-total', 'ledger', `balances sum to ${total}, not 0`);

  return {
    ...counts,
    grandTotalMinor: total,
    clearingBalanceMinor: inTransit,
    issuanceBalanceMinor: tallies.get(ISSUANCE_ACCOUNT)?.balance ?? 0n,
    settledBefore: settledBefore.toISOString(),
    itemsKept: keptEntries.size + keptTransfers.size + keptCredits.size,
    accountsReread: reread.length,
    fetchedAfterScan: reader.fetched,
    scans,
    breaks,
  };
}
