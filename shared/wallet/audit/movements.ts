import { creditKey, entryKey, transferKey } from '../dynamodb/keys.ts';
import { addressOfAccount } from '../model/accounts.ts';
import type { Broken } from './breaks.ts';
import type { KeyReader } from './key-reader.ts';
import {
  type Credit,
  compactCredit,
  compactEntry,
  compactTransfer,
  type Entry,
  type Names,
  payerOf,
  type Transfer,
  throughClearing,
} from './records.ts';

/** A direct transfer's two entries' keys: the payer's (issuance for a deposit) and the payee's. */
const sideKeys = (t: Transfer): [string, string] => [
  entryKey(payerOf(t), t.fromSeq ?? 0),
  entryKey(`W#${t.toAddress}`, t.toSeq ?? 0),
];

/** The payer's entry of a payment through the clearing account, as its transfer record names it. */
const payerKey = (t: Transfer) => entryKey(payerOf(t), t.fromSeq ?? 0);

/** The credits the audit knows, by transfer id: as given, or as read again by key (newer). */
export type KnownCredits = Map<string, Credit>;

/**
 * The exact check of some movements, item by item, naming each break:
 * - a direct movement: every entry has its mirror entry on the other side and its transfer
 *   record, and every transfer record has exactly its two entries;
 * - a payment through the clearing account: the payer's entry, the transfer record and the
 *   credit state the same payment (a payer's entry or record without a credit is a lost credit);
 *   a posted credit names its recipient's entry, which names the transfer, amount and payer's
 *   entry (a credit marked posted without it is a lost credit too); and no other entry claims
 *   the credit (one that does, or whose credit is not marked posted, is a credit posted twice).
 * What `entries`, `transfers` and `credits` do not hold is read by key, strongly consistent: a
 * movement's items commit together, so one that exists has every sibling readable. The credit a
 * recipient's entry posts is read again unless it is known posted, as its posting may have
 * committed since it was scanned; the credit a payer's entry or transfer record names is read only
 * when unknown, as their check does not depend on its posting.
 *
 * Memory: the given items and what they name, so the audit hands it only the few movements its
 * fingerprints cannot vouch for (items written since the horizon, or read again by key, or in a
 * bucket that did not balance). Returns every credit it knew or read, for the clearing account's
 * balance.
 */
export async function checkMovements(
  entries: ReadonlyMap<string, Entry>,
  transfers: ReadonlyMap<string, Transfer>,
  credits: ReadonlyMap<string, Credit>,
  { reader, names, broken }: { reader: KeyReader; names: Names; broken: Broken },
): Promise<KnownCredits> {
  const otherEntries = new Map<string, Entry>();
  const otherTransfers = new Map<string, Transfer>();
  const known: KnownCredits = new Map();
  for (const credit of credits.values()) known.set(credit.transferId, credit);
  const missing = (keys: Iterable<string>, ...held: ReadonlyMap<string, unknown>[]) =>
    [...keys].filter((key) => !held.some((map) => map.has(key)));

  // What the entries, records and credits name: mirrors, credits (a recipient's entry's again
  // unless known posted, the others only when unknown), then records.
  const mirrorKeys: string[] = [];
  const creditKeys: string[] = [];
  for (const entry of entries.values()) {
    if (!throughClearing(entry))
      mirrorKeys.push(entryKey(entry.counterpartyAccount, entry.counterpartySeq ?? 0));
    else if (
      entry.direction === 'out'
        ? !known.has(entry.transferId)
        : known.get(entry.transferId)?.postedSeq === undefined
    ) {
      creditKeys.push(creditKey(entry.transferId));
    }
  }
  for (const transfer of transfers.values()) {
    if (transfer.via === 'clearing' && !known.has(transfer.transferId))
      creditKeys.push(creditKey(transfer.transferId));
  }
  for (const [key, item] of await reader.read(missing(mirrorKeys, entries))) {
    otherEntries.set(key, compactEntry(item, names));
  }
  for (const item of (await reader.read(creditKeys)).values()) {
    const credit = compactCredit(item, names);
    known.set(credit.transferId, credit);
  }
  const recordKeys = [...entries.values(), ...known.values()].map((e) => transferKey(e.transferId));
  for (const [key, item] of await reader.read(missing(recordKeys, transfers))) {
    otherTransfers.set(key, compactTransfer(item));
  }
  const entryAt = (key: string) => entries.get(key) ?? otherEntries.get(key);
  const transferAt = (key: string) => transfers.get(key) ?? otherTransfers.get(key);

  // Then the entries the records and credits name.
  const sides = [...transfers.values()].flatMap((t) => (t.via === 'clearing' ? [payerKey(t)] : sideKeys(t)));
  for (const credit of known.values()) {
    sides.push(entryKey(credit.fromAccount, credit.fromSeq));
    if (credit.postedSeq !== undefined) sides.push(entryKey(credit.toAccount, credit.postedSeq));
  }
  for (const [key, item] of await reader.read(missing(sides, entries, otherEntries))) {
    otherEntries.set(key, compactEntry(item, names));
  }

  const lost = new Set<string>();
  const creditLost = (transferId: string, detail: string) => {
    if (lost.has(transferId)) return;
    lost.add(transferId);
    broken('credit-lost', creditKey(transferId), detail);
  };

  for (const [key, entry] of entries) {
    const transfer = transferAt(transferKey(entry.transferId));
    if (throughClearing(entry)) {
      checkClearingEntry(key, entry, known.get(entry.transferId), transfer, broken, creditLost);
      continue;
    }
    const otherKey = entryKey(entry.counterpartyAccount, entry.counterpartySeq ?? 0);
    const other = entryAt(otherKey);
    if (
      !other ||
      other.transferId !== entry.transferId ||
      other.amountMinor !== entry.amountMinor ||
      other.direction === entry.direction ||
      other.counterpartyAccount !== entry.account ||
      other.counterpartySeq !== entry.seq
    ) {
      broken('entry-unpaired', key, `its other side ${otherKey} is ${other ? 'not its mirror' : 'missing'}`);
    }
    const side = entry.direction === 'out' ? transfer?.fromSeq : transfer?.toSeq;
    if (!transfer || transfer.via || transfer.amountMinor !== entry.amountMinor || side !== entry.seq) {
      broken(
        'transfer-mismatch',
        key,
        `transfer ${entry.transferId} ${transfer ? 'does not match it' : 'is missing'}`,
      );
    }
  }

  for (const [key, transfer] of transfers) {
    const matches = (e: Entry | undefined, direction: string) =>
      e?.transferId === transfer.transferId &&
      e.direction === direction &&
      e.amountMinor === transfer.amountMinor;
    if (transfer.via === 'clearing') {
      const out = entryAt(payerKey(transfer));
      if (!matches(out, 'out') || !out || !throughClearing(out)) {
        broken('transfer-entries', key, "does not have its payer's entry into the clearing account");
      }
      if (!known.has(transfer.transferId)) {
        creditLost(
          transfer.transferId,
          `transfer ${transfer.transferId} went through the clearing account, which holds no credit of it`,
        );
      }
      continue;
    }
    const [out, into] = sideKeys(transfer).map(entryAt);
    if (!matches(out, 'out') || !matches(into, 'in')) {
      broken('transfer-entries', key, 'does not have exactly its two matching entries');
    }
  }

  for (const credit of known.values()) {
    const key = creditKey(credit.transferId);
    const payerEntry = entryKey(credit.fromAccount, credit.fromSeq);
    const paid = entryAt(payerEntry);
    if (
      !paid ||
      paid.transferId !== credit.transferId ||
      paid.direction !== 'out' ||
      !throughClearing(paid) ||
      paid.amountMinor !== credit.amountMinor ||
      paid.counterpartyAddress !== addressOfAccount(credit.toAccount)
    ) {
      broken(
        'credit-mismatch',
        key,
        `its payer's entry ${payerEntry} is ${paid ? 'another payment' : 'missing'}`,
      );
    }
    const record = transferAt(transferKey(credit.transferId));
    if (
      record?.via !== 'clearing' ||
      record.amountMinor !== credit.amountMinor ||
      record.fromSeq !== credit.fromSeq ||
      payerOf(record) !== credit.fromAccount ||
      `W#${record.toAddress}` !== credit.toAccount
    ) {
      broken(
        'credit-mismatch',
        key,
        `transfer ${credit.transferId} ${record ? 'states another payment' : 'is missing'}`,
      );
    }
    if (credit.postedSeq === undefined) continue;
    const postedKey = entryKey(credit.toAccount, credit.postedSeq);
    const posted = entryAt(postedKey);
    if (
      !posted ||
      posted.transferId !== credit.transferId ||
      posted.direction !== 'in' ||
      !throughClearing(posted)
    ) {
      creditLost(
        credit.transferId,
        `marked posted at ${postedKey}, which is ${posted ? 'another movement' : 'missing'}`,
      );
    } else if (posted.amountMinor !== credit.amountMinor || posted.counterpartySeq !== credit.fromSeq) {
      broken('credit-mismatch', key, `its posting ${postedKey} states another amount or payer's entry`);
    }
  }
  return known;
}

/** A side of a payment through the clearing account against its credit and transfer record. */
function checkClearingEntry(
  key: string,
  entry: Entry,
  credit: Credit | undefined,
  transfer: Transfer | undefined,
  broken: Broken,
  creditLost: (transferId: string, detail: string) => void,
): void {
  const address = addressOfAccount(entry.account);
  const out = entry.direction === 'out';
  if (out) {
    if (!credit) {
      creditLost(entry.transferId, `${key} paid it into the clearing account, which holds no credit of it`);
    } else if (
      credit.fromAccount !== entry.account ||
      credit.fromSeq !== entry.seq ||
      credit.amountMinor !== entry.amountMinor ||
      addressOfAccount(credit.toAccount) !== entry.counterpartyAddress
    ) {
      broken('entry-unpaired', key, `its credit ${creditKey(entry.transferId)} states another payment`);
    }
  } else if (!credit) {
    broken('entry-unpaired', key, `credit ${creditKey(entry.transferId)}, which it posts, is missing`);
  } else if (credit.postedSeq !== entry.seq || credit.toAccount !== entry.account) {
    broken(
      'credit-posted-twice',
      key,
      credit.postedSeq === undefined
        ? `it posts ${creditKey(entry.transferId)}, which is not marked posted: it would be posted again`
        : `it posts ${creditKey(entry.transferId)} again: the credit was posted at ${entryKey(credit.toAccount, credit.postedSeq)}`,
    );
  } else if (
    credit.amountMinor !== entry.amountMinor ||
    credit.fromSeq !== entry.counterpartySeq ||
    addressOfAccount(credit.fromAccount) !== entry.counterpartyAddress
  ) {
    broken('entry-unpaired', key, `its credit ${creditKey(entry.transferId)} states another payment`);
  }
  // The payer's side is this entry when it pays, its counterparty when it is paid.
  const [payerSeq, payer, payee] = out
    ? [entry.seq, address, entry.counterpartyAddress]
    : [entry.counterpartySeq, entry.counterpartyAddress, address];
  if (
    transfer?.via !== 'clearing' ||
    transfer.amountMinor !== entry.amountMinor ||
    transfer.fromSeq !== payerSeq ||
    transfer.fromAddress !== payer ||
    transfer.toAddress !== payee
  ) {
    broken(
      'transfer-mismatch',
      key,
      `transfer ${entry.transferId} ${transfer ? 'does not match it' : 'is missing'}`,
    );
  }
}
