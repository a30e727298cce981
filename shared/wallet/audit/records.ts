import {
  accountOfEntryItem,
  batchKey,
  creditKey,
  entryKey,
  historyShardOf,
  transferKey,
} from '../dynamodb/keys.ts';
import { CLEARING_ACCOUNT, ISSUANCE_ACCOUNT, walletAccount } from '../model/accounts.ts';
import type { EntryRecord } from '../model/entry.ts';

/* What the audit reads of the ledger's items, compact: only the attributes it checks. */

export type Item = Record<string, unknown>;

/** Only what the audit checks of an entry: no currency or kind. */
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
  | 'counterpartyAddress'
> & {
  /** When the entry was written (epoch ms): its posting for a credit's entry, else its movement's. */
  readonly writtenAt: number;
};

/** Only what the audit checks of a transfer. */
export interface Transfer {
  readonly transferId: string;
  readonly transferKind: string;
  readonly amountMinor: number;
  readonly fromAddress?: string;
  readonly toAddress: string;
  readonly fromSeq?: number;
  readonly toSeq?: number;
  /** The payment went through the clearing account: it has a credit and no toSeq. */
  readonly via?: 'clearing';
}

/** Only what the audit checks of a credit in transit (CREDIT#<transferId>). */
export interface Credit {
  readonly transferId: string;
  readonly fromAccount: string;
  readonly fromSeq: number;
  readonly toAccount: string;
  readonly amountMinor: number;
  /** The recipient's entry, once posted. */
  readonly postedSeq?: number;
  /** Epoch ms: when the payer's transaction wrote it, and when the poster posted it. */
  readonly createdAt: number;
  readonly postedAt?: number;
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
  'historyShard',
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
  'counterpartyAddress',
  'via',
  'fromAccount',
  'toAccount',
  'postedSeq',
  'postedAt',
  // A hot wallet's batches (./batches.ts), and the batch that holds a credit.
  'batchId',
  'credits',
  'firstSeq',
  'balanceBefore',
  'completedAt',
  // A deposit's claim on its id, and its transfer (./deposits.ts).
  'depositId',
  'address',
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

/**
 * When an item was last written, in epoch ms: a credit's posting, or an entry the poster wrote
 * (`postedAt`), lies after its movement's `createdAt`; NaN when a date is not a date.
 */
export const writtenAt = (item: Item): number =>
  item.postedAt === undefined
    ? Date.parse(item.createdAt as string)
    : Math.max(Date.parse(item.createdAt as string), Date.parse(item.postedAt as string));

/**
 * Why an entry, transfer or credit is not where its own fields put it, if it is not: under another
 * key (a copy the checks pair with the original's mirror and record, which a history lists
 * twice), or, for an entry, in the wrong history index or under another of its wallet's
 * `history-shards` keys (where readers, who query each key for its share of a page, miss it).
 */
export function misplaced(item: Item): string | undefined {
  const { pk, kind, transferId } = item;
  if (kind === 'batch') return misplacedBatch(item);
  if (kind === 'transfer' || kind === 'credit') {
    const key = kind === 'transfer' ? transferKey(String(transferId)) : creditKey(String(transferId));
    return pk === key ? undefined : `stored at ${String(pk)}, not at ${key}`;
  }
  const account = accountOfEntryItem(item);
  const key = entryKey(account, item.seq as number);
  if (pk !== key) return `stored at ${String(pk)}, not at ${key}`;
  if (item.historyShard === undefined) return undefined;
  if (item.account !== undefined) return 'in both the history and the history-shards index';
  const shard = historyShardOf(account, item.seq as number);
  return item.historyShard === shard
    ? undefined
    : `under history shard ${String(item.historyShard)}, not ${shard}`;
}

/**
 * Why a batch is not where its fields put it, if it is not: posted and not completed, it stands for
 * its credits' entries in its wallet's `history-shards` key of its first seq (the history reads it
 * there: under another key, its credits are in no page); otherwise in that index not at all (a
 * completed batch's entries are written, and a page would list them twice).
 */
function misplacedBatch(item: Item): string | undefined {
  const key = batchKey(String(item.batchId));
  if (item.pk !== key) return `stored at ${String(item.pk)}, not at ${key}`;
  const where = `history shard ${String(item.historyShard)} at seq ${String(item.seq)}`;
  if (typeof item.firstSeq !== 'number' || item.completedAt !== undefined) {
    return item.historyShard === undefined && item.seq === undefined
      ? undefined
      : `under ${where}, not posted or already completed`;
  }
  const shard = historyShardOf(String(item.toAccount), item.firstSeq);
  return item.historyShard === shard && item.seq === item.firstSeq
    ? undefined
    : `under ${where}, not ${shard} at seq ${item.firstSeq}`;
}

/**
 * Why an entry's, transfer's or credit's amount is not one a movement may have, if it is not: every
 * other check compares items with each other, so a movement of -5 written alike everywhere (it takes
 * from its recipient) would agree with itself.
 */
export function notPositive(item: Item): string | undefined {
  const { amountMinor } = item;
  return Number.isSafeInteger(amountMinor) && (amountMinor as number) > 0
    ? undefined
    : `amountMinor ${String(amountMinor)} is not a positive safe integer`;
}

export const compactEntry = (item: Item, names: Interner): Entry => ({
  account: names.intern(accountOfEntryItem(item)),
  seq: item.seq as number,
  transferId: item.transferId as string,
  direction: item.direction as Entry['direction'],
  amountMinor: item.amountMinor as number,
  balanceAfter: item.balanceAfter as number | bigint,
  counterpartyAccount: names.intern(item.counterpartyAccount as string),
  counterpartySeq: item.counterpartySeq as number | undefined,
  ...(item.counterpartyAddress === undefined
    ? {}
    : { counterpartyAddress: names.intern(item.counterpartyAddress as string) }),
  writtenAt: writtenAt(item),
});

export const compactTransfer = (item: Item): Transfer => ({
  transferId: item.transferId as string,
  transferKind: item.transferKind as string,
  amountMinor: item.amountMinor as number,
  fromAddress: item.fromAddress as string | undefined,
  toAddress: item.toAddress as string,
  fromSeq: item.fromSeq as number | undefined,
  toSeq: item.toSeq as number | undefined,
  ...(item.via === 'clearing' ? { via: 'clearing' as const } : {}),
});

export const compactCredit = (item: Item, names: Interner): Credit => ({
  transferId: item.transferId as string,
  fromAccount: names.intern(item.fromAccount as string),
  fromSeq: item.fromSeq as number,
  toAccount: names.intern(item.toAccount as string),
  amountMinor: item.amountMinor as number,
  ...(item.postedSeq === undefined ? {} : { postedSeq: item.postedSeq as number }),
  createdAt: Date.parse(item.createdAt as string),
  ...(item.postedAt === undefined ? {} : { postedAt: Date.parse(item.postedAt as string) }),
});

/** Whether an entry is a side of a payment through the clearing account (paid into it, or posted out of it). */
export const throughClearing = (entry: Entry): boolean => entry.counterpartyAccount === CLEARING_ACCOUNT;

/**
 * What an entry adds to the clearing account: a payer's entry into it adds its amount, a posted
 * credit's entry out of it takes it away; any other entry, nothing.
 */
export const clearingShare = (entry: Entry): bigint => (throughClearing(entry) ? -signed(entry) : 0n);

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

/** A wallet's account from an address an item names; a missing address stays visibly missing. */
const accountOf = (address: string | undefined) =>
  address === undefined ? 'no address' : walletAccount(address);

/*
 * A movement as each of its items must tell it, so that the items of a movement state the same
 * text exactly when they agree on every field the audit pairs them by.
 * - A direct movement: id, amount, and the account and seq of each side; stated by its out entry,
 *   its in entry and its transfer record.
 * - A payment through the clearing account is two: the payment into it (id, amount, payer's
 *   account and seq, recipient's account), stated by the payer's entry, the transfer record and
 *   the credit; and, once posted, the posting out of it (the same and the recipient's seq),
 *   stated by the credit and the recipient's entry.
 * The three shapes differ (a direct movement's second element is its amount, a number; the others
 * start with their kind and the id), so no statement of one kind can stand for another.
 */

export function movementOfEntry(entry: Entry): string {
  if (throughClearing(entry)) {
    return entry.direction === 'out'
      ? paymentInto(
          entry.transferId,
          entry.amountMinor,
          entry.account,
          entry.seq,
          accountOf(entry.counterpartyAddress),
        )
      : postingOf(
          entry.transferId,
          entry.amountMinor,
          accountOf(entry.counterpartyAddress),
          entry.counterpartySeq,
          entry.account,
          entry.seq,
        );
  }
  const self = [entry.account, entry.seq] as const;
  const other = [entry.counterpartyAccount, entry.counterpartySeq] as const;
  const [from, to] = entry.direction === 'out' ? [self, other] : [other, self];
  return JSON.stringify([entry.transferId, entry.amountMinor, ...from, ...to]);
}

export const movementOfTransfer = (t: Transfer): string =>
  t.via === 'clearing'
    ? paymentInto(t.transferId, t.amountMinor, payerOf(t), t.fromSeq, accountOf(t.toAddress))
    : JSON.stringify([
        t.transferId,
        t.amountMinor,
        payerOf(t),
        t.fromSeq ?? 0,
        `W#${t.toAddress}`,
        t.toSeq ?? 0,
      ]);

/** The payment into the clearing account, as its credit states it. */
export const paymentOfCredit = (c: Credit): string =>
  paymentInto(c.transferId, c.amountMinor, c.fromAccount, c.fromSeq, c.toAccount);

/** The posting out of the clearing account, as its (posted) credit states it. */
export const postingOfCredit = (c: Credit): string =>
  postingOf(c.transferId, c.amountMinor, c.fromAccount, c.fromSeq, c.toAccount, c.postedSeq);

const paymentInto = (id: string, amount: number, payer: string, payerSeq: unknown, recipient: string) =>
  JSON.stringify(['clearing', id, amount, payer, payerSeq ?? 0, recipient]);

const postingOf = (
  id: string,
  amount: number,
  payer: string,
  payerSeq: unknown,
  recipient: string,
  recipientSeq: unknown,
) => JSON.stringify(['posting', id, amount, payer, payerSeq ?? 0, recipient, recipientSeq ?? 0]);
