import { entryKey, transferKey } from '../ledger-keys.ts';
import type { Broken } from './breaks.ts';
import type { KeyReader } from './key-reader.ts';
import { compactEntry, compactTransfer, type Entry, type Names, payerOf, type Transfer } from './records.ts';

/** A transfer's two entries' keys: the payer's (issuance for a deposit) and the payee's. */
const sideKeys = (t: Transfer): [string, string] => [
  entryKey(payerOf(t), t.fromSeq ?? 0),
  entryKey(`W#${t.toAddress}`, t.toSeq ?? 0),
];

/**
 * The exact check of some movements, item by item, naming each break: every entry has its mirror
 * entry on the other side and its transfer record, and every transfer record has exactly its two
 * entries. What `entries` and `transfers` do not hold is read by key, strongly consistent: a
 * movement's items commit together, so one that exists has every sibling readable.
 *
 * Memory: the given items and what they name, so the audit hands it only the few movements its
 * fingerprints cannot vouch for (those created while it ran, or in a bucket that did not balance).
 */
export async function checkMovements(
  entries: ReadonlyMap<string, Entry>,
  transfers: ReadonlyMap<string, Transfer>,
  { reader, names, broken }: { reader: KeyReader; names: Names; broken: Broken },
): Promise<void> {
  const otherEntries = new Map<string, Entry>();
  const otherTransfers = new Map<string, Transfer>();
  const missing = (keys: Iterable<string>, ...known: ReadonlyMap<string, unknown>[]) =>
    [...keys].filter((key) => !known.some((map) => map.has(key)));

  const mirrorKeys = [...entries.values()].map((e) => entryKey(e.counterpartyAccount, e.counterpartySeq));
  const transferKeys = [...entries.values()].map((e) => transferKey(e.transferId));
  for (const [key, item] of await reader.read(missing(mirrorKeys, entries))) {
    otherEntries.set(key, compactEntry(item, names));
  }
  for (const [key, item] of await reader.read(missing(transferKeys, transfers))) {
    otherTransfers.set(key, compactTransfer(item));
  }
  const entryAt = (key: string) => entries.get(key) ?? otherEntries.get(key);
  const transferAt = (key: string) => transfers.get(key) ?? otherTransfers.get(key);

  for (const [key, entry] of entries) {
    const otherKey = entryKey(entry.counterpartyAccount, entry.counterpartySeq);
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
    const transfer = transferAt(transferKey(entry.transferId));
    const side = entry.direction === 'out' ? transfer?.fromSeq : transfer?.toSeq;
    if (!transfer || transfer.amountMinor !== entry.amountMinor || side !== entry.seq) {
      broken(
        'transfer-mismatch',
        key,
        `transfer ${entry.transferId} ${transfer ? 'does not match it' : 'is missing'}`,
      );
    }
  }

  const sides = [...transfers.values()].flatMap(sideKeys);
  for (const [key, item] of await reader.read(missing(sides, entries, otherEntries))) {
    otherEntries.set(key, compactEntry(item, names));
  }
  for (const [key, transfer] of transfers) {
    const [out, into] = sideKeys(transfer).map(entryAt);
    const matches = (e: Entry | undefined, direction: string) =>
      e?.transferId === transfer.transferId &&
      e.direction === direction &&
      e.amountMinor === transfer.amountMinor;
    if (!matches(out, 'out') || !matches(into, 'in')) {
      broken('transfer-entries', key, 'does not have exactly its two matching entries');
    }
  }
}
