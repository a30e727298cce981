import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { eachLimited } from '../../util/each-limited.ts';
import { accountKey } from '../dynamodb/keys.ts';
import { UNCOMPLETED_NAMED_AFTER_MS } from '../hot-wallet/sweep-batches.ts';
import { CLEARING_ACCOUNT, ISSUANCE_ACCOUNT } from '../model/accounts.ts';
import {
  AccountTally,
  impossibleBalance,
  mustReadOn,
  type Prefix,
  provenPrefix,
  readAccountOn,
} from './accounts.ts';
import { PostedBatches } from './batches.ts';
import type { AuditBreak, Broken } from './breaks.ts';
import { atTheCuts, ClearingSums } from './clearing.ts';
import { DepositClaims, isDepositItem } from './deposits.ts';
import { Fingerprint, IN_ENTRY, MovementSums, OUT_ENTRY, TRANSFER_RECORD } from './fingerprints.ts';
import { createKeyReader } from './key-reader.ts';
import { LookalikeWallets } from './lookalikes.ts';
import { checkMovements, type KnownCredits } from './movements.ts';
import {
  accountOfKey,
  type Credit,
  clearingShare,
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
  signed,
  type Transfer,
  throughClearing,
  UNINTERNED,
  writtenAt,
} from './records.ts';
import { BucketRecount } from './recount.ts';
import { scanTable } from './scan.ts';
import { StuckCredits } from './stuck-credits.ts';

export type { AuditBreak } from './breaks.ts';

/*
 * The audit of the wallet ledger: every invariant of double entry, checked on a live table, in
 * memory that grows with the number of accounts, not of entries.
 *
 * Main course: one Scan (parallel segments) files each item as it arrives. An item written
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
  /** Parallel Scan segments. @default 4 */
  readonly segments?: number;
  /**
   * Items written before this are settled: checked by fingerprint. It should lie before the scan
   * starts by more than a movement can take to commit (a send's transaction ends within the send
   * route's `timeoutSeconds`, in shared/routes.ts, of its createdAt; a posting's within one commit
   * call, `worstCaseCallMs`, of its postedAt); a later one costs a second scan, never a false
   * break. @default SETTLING_MS before now
   */
  readonly settledBefore?: Date;
}

const SETTLING_MS = 5 * 60_000;
/** Accounts read again at once after the scan: each is a short run of BatchGetItems. */
const REREAD_CONCURRENCY = 8;

/** Scans and audits a table: what `npm run wallet:audit` and the scheduled audit run. */
export async function auditTable(
  client: DynamoDBDocumentClient,
  tableName: string,
  { segments = 4, settledBefore = new Date(Date.now() - SETTLING_MS) }: AuditOptions = {},
): Promise<AuditReport> {
  const startedAt = Date.now();
  const horizon = settledBefore.getTime();
  // Settled once written before the horizon: for a posting's items (the recipient's entry, the
  // credit's mark) that is when it was posted, not when its payment was created.
  const settled = (item: Item) => writtenAt(item) < horizon;
  const createdSettled = (item: Item) => Date.parse(item.createdAt as string) < horizon;
  const fp = new Fingerprint();
  const names = new Names();
  const sums = new MovementSums();
  const clearing = new ClearingSums(sums.buckets);
  const deposits = new DepositClaims(sums.buckets, (transferId) => sums.bucketOf(transferId));
  const tallies = new Map<string, AccountTally>();
  const tally = (account: string) => {
    const found = tallies.get(account);
    if (found) return found;
    const created = new AccountTally();
    tallies.set(account, created);
    return created;
  };
  /** Entries and transfers written since the horizon, by key. */
  const keptEntries = new Map<string, Entry>();
  const keptTransfers = new Map<string, Transfer>();
  /** Credits created or posted since the horizon, by key: their item changes when posted. */
  const keptCredits = new Map<string, Credit>();
  /**
   * Credits folded in without their posting (in transit, or posted since the horizon), by id: as
   * many as are in transit. One of them read again after the scan may be posted, and dated before
   * the horizon, by a posting that committed after the scan passed it: the settled sums lack it.
   */
  const foldedUnposted = new Set<string>();
  const counts = { itemsScanned: 0, accounts: 0, entries: 0, transfers: 0, credits: 0, creditsUnposted: 0 };
  const stuck = new StuckCredits();
  const batches = new PostedBatches();
  const lookalikes = new LookalikeWallets();
  /** Items not where their fields put them, with why: few, as each is a break. */
  const misplacedItems: [string, string][] = [];

  await scanTable(client, tableName, segments, (item) => {
    counts.itemsScanned++;
    const pk = item.pk as string;
    const account = accountOfKey(pk);
    if (item.kind === 'entry' || item.kind === 'transfer' || item.kind === 'credit') {
      const wrong = misplaced(item);
      if (wrong) misplacedItems.push([pk, wrong]);
    }
    if (isDepositItem(item)) deposits.consider(fp, item, createdSettled(item));
    if (account) {
      counts.accounts++;
      const state = tally(account);
      state.cut = (item.seq as number | undefined) ?? 0;
      state.balance = minorUnits(item.balance ?? 0);
      if (account !== ISSUANCE_ACCOUNT) lookalikes.consider(account.slice('W#'.length));
    } else if (item.kind === 'entry') {
      counts.entries++;
      if (!settled(item)) keptEntries.set(pk, compactEntry(item, names));
      else {
        const entry = compactEntry(item, UNINTERNED);
        tally(entry.account).fold(fp, entry);
        sums.add(
          entry.direction === 'out' ? OUT_ENTRY : IN_ENTRY,
          entry.transferId,
          fp.of(movementOfEntry(entry)),
        );
      }
    } else if (item.kind === 'transfer') {
      counts.transfers++;
      const transfer = compactTransfer(item);
      if (!settled(item)) keptTransfers.set(pk, transfer);
      else sums.add(TRANSFER_RECORD, transfer.transferId, fp.of(movementOfTransfer(transfer)));
    } else if (item.kind === 'credit') {
      counts.credits++;
      if (item.postedSeq === undefined) {
        counts.creditsUnposted++;
        stuck.consider(item);
        batches.unposted(item);
      }
      fileCredit(item);
    } else if (item.kind === 'batch') batches.consider(item);
  });

  /**
   * A credit: its payment into the clearing account is settled once created before the horizon,
   * its posting once posted before it. Only a credit paid before the horizon is folded in; one
   * paid or posted since is kept. One paid before and still in transit is folded, not kept,
   * however old: should it be posted while the scan runs, its recipient's entry is a recent one,
   * kept and checked against the credit read again.
   */
  function fileCredit(item: Item): void {
    const paidSettled = createdSettled(item);
    const postedSettled = item.postedSeq !== undefined && settled(item);
    if (!paidSettled || (item.postedSeq !== undefined && !postedSettled)) {
      keptCredits.set(item.pk as string, compactCredit(item, names));
    }
    if (!paidSettled) return;
    const credit = compactCredit(item, UNINTERNED);
    const bucket = sums.bucketOf(credit.transferId);
    sums.addCredit(fp, credit, postedSettled);
    clearing.paid(bucket, credit.amountMinor);
    if (postedSettled) clearing.posted(bucket, credit.amountMinor);
    else foldedUnposted.add(credit.transferId);
  }

  const breaks: AuditBreak[] = [];
  const broken: Broken = (invariant, subject, detail) => breaks.push({ invariant, subject, detail });
  const tableReader = createKeyReader(client, tableName);
  // Batches posted and not completed read as completed: by all but the stuck check (audit/batches.ts).
  const reader = batches.derive(horizon, keptEntries, names).reader(tableReader);
  for (const [pk, wrong] of misplacedItems) broken('item-misplaced', pk, wrong);
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
