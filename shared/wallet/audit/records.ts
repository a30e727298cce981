import { type EntryRecord, ISSUANCE_ACCOUNT } from '../ledger-keys.ts';

/* What the audit reads of the ledger's items, compact: only the attributes it checks. */

export type Item = Record<string, unknown>;

/** Only what the audit checks of an entry: no currency, kind or timestamps. */
export type Entry = Pick<
  EntryRecord,
  | 'account'
  | 'seq'
  | 'transferId'
  | 'direction'
  | 'amountMinor'
  | 'balanceAfter'
  | 'counterpartyAccount'
  | 'counterpartySeq'
>;

/** Only what the audit checks of a transfer. */
export interface Transfer {
  readonly transferId: string;
  readonly transferKind: string;
  readonly amountMinor: number;
  readonly fromAddress?: string;
  readonly toAddress: string;
  readonly fromSeq?: number;
  readonly toSeq?: number;
}

/*
 * The attributes the audit reads: every other one (currency, idempotency records' copies of
 * transfers) is never unmarshalled. The read units are the same (a Scan is charged by item size);
 * the memory is not (docs/decisions/double-entry-ledger.md).
 */
const AUDITED = [
  'pk',
  'kind',
  'balance',
  'seq',
  'account',
  'transferId',
  'transferKind',
  'direction',
  'amountMinor',
  'balanceAfter',
  'counterpartyAccount',
  'counterpartySeq',
  'fromAddress',
  'toAddress',
  'fromSeq',
  'toSeq',
  'createdAt',
] as const;
export const auditedProjection = {
  ProjectionExpression: AUDITED.map((_, i) => `#a${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(AUDITED.map((name, i) => [`#a${i}`, name])),
};

/** How account names are stored: {@link Names}, or {@link UNINTERNED} for a record not kept. */
export interface Interner {
  intern(name: string): string;
}

/** For records folded and dropped at once: interning would only keep a second map of every account. */
export const UNINTERNED: Interner = { intern: (name) => name };

/** One copy of each account name, however many records name it: names are most of an entry's bytes. */
export class Names implements Interner {
  readonly #names = new Map<string, string>();
  intern(name: string): string {
    const known = this.#names.get(name);
    if (known !== undefined) return known;
    this.#names.set(name, name);
    return name;
  }
}

export const compactEntry = (item: Item, names: Interner): Entry => ({
  account: names.intern(item.account as string),
  seq: item.seq as number,
  transferId: item.transferId as string,
  direction: item.direction as Entry['direction'],
  amountMinor: item.amountMinor as number,
  balanceAfter: item.balanceAfter as number | bigint,
  counterpartyAccount: names.intern(item.counterpartyAccount as string),
  counterpartySeq: item.counterpartySeq as number,
});

export const compactTransfer = (item: Item): Transfer => ({
  transferId: item.transferId as string,
  transferKind: item.transferKind as string,
  amountMinor: item.amountMinor as number,
  fromAddress: item.fromAddress as string | undefined,
  toAddress: item.toAddress as string,
  fromSeq: item.fromSeq as number | undefined,
  toSeq: item.toSeq as number | undefined,
});

/** The account of an account item's key; `undefined` for any other item. */
export function accountOfKey(pk: string): string | undefined {
  if (pk === 'ACCOUNT#ISSUANCE') return ISSUANCE_ACCOUNT;
  return pk.startsWith('WALLET#') ? `W#${pk.slice('WALLET#'.length)}` : undefined;
}

/**
 * A stored amount or balance, exactly; anything else (missing, a fraction, a string: a corrupted
 * item) as a value no ledger holds, so that the checks it enters fail and name the item instead
 * of the audit stopping on a TypeError.
 */
export const minorUnits = (value: unknown): bigint =>
  typeof value === 'bigint' ? value : Number.isSafeInteger(value) ? BigInt(value as number) : MALFORMED;
const MALFORMED = -(2n ** 100n);

/** What an entry adds to its account's balance. */
export const signed = (entry: Entry): bigint =>
  entry.direction === 'in' ? minorUnits(entry.amountMinor) : -minorUnits(entry.amountMinor);

/** A movement's paying side: the issuance account for a deposit. */
export const payerOf = (transfer: Transfer): string =>
  transfer.transferKind === 'deposit' ? ISSUANCE_ACCOUNT : `W#${transfer.fromAddress}`;

/**
 * A movement as all three of its items must tell it: id, amount, and the account and seq of each
 * side. An out entry, its in entry and its transfer record state the same movement exactly when
 * they agree on every field the audit pairs them by.
 */
export function movementOfEntry(entry: Entry): string {
  const self = [entry.account, entry.seq] as const;
  const other = [entry.counterpartyAccount, entry.counterpartySeq] as const;
  const [from, to] = entry.direction === 'out' ? [self, other] : [other, self];
  return JSON.stringify([entry.transferId, entry.amountMinor, ...from, ...to]);
}

export const movementOfTransfer = (t: Transfer): string =>
  JSON.stringify([t.transferId, t.amountMinor, payerOf(t), t.fromSeq ?? 0, `W#${t.toAddress}`, t.toSeq ?? 0]);
