/*
 * Single-table layout of the wallet ledger (partition key `pk`; the `history` index on
 * `account` + `seq` holds the entries only, so it is sparse):
 *   WALLET#<address>           balance, seq, updatedAt     one account per wallet; exists once the
 *                                                          wallet is open: money only goes to one
 *   ACCOUNT#ISSUANCE           balance, seq                 the issuance account: minus all ever issued
 *   ENTRY#["<account>",<seq>]  one side of a movement       immutable; account, seq (1, 2, …), transferId,
 *                                                          direction, amountMinor, balanceAfter, the
 *                                                          counterparty's account and seq
 *   TRANSFER#<transferId>      the movement                 immutable; its two sides' seqs; transfers and
 *                                                          deposits alike (transferKind)
 *   DEPOSIT#<depositId>        a deposit's claim on its id  immutable; names its transferId
 *   IDEMPOTENCY#["sub","key"]  the transfer the key made    expiresAt (DynamoDB TTL)
 * An account's `seq` counts its entries: each movement writes, in its one transaction, the two
 * accounts with seq + 1 (on condition that they still hold the balance and seq read) and an
 * entry at that seq on each side, so the entries of an account are numbered 1..seq without gaps.
 */

/** The account of the issuance account in entries and the history index. */
export const ISSUANCE_ACCOUNT = 'ISSUANCE';

/** The account of a wallet in entries and the history index: never equal to {@link ISSUANCE_ACCOUNT}. */
export const walletAccount = (address: string): string => `W#${address}`;

/** The address of a wallet account; `undefined` for the issuance account. */
export const addressOfAccount = (account: string): string | undefined =>
  account.startsWith('W#') ? account.slice(2) : undefined;

/** The item key of an account (wallet or issuance). */
export const accountKey = (account: string): string =>
  account === ISSUANCE_ACCOUNT ? 'ACCOUNT#ISSUANCE' : `WALLET#${account.slice(2)}`;

export const walletKey = (address: string): string => `WALLET#${address}`;
export const entryKey = (account: string, seq: number): string => `ENTRY#${JSON.stringify([account, seq])}`;
export const transferKey = (transferId: string): string => `TRANSFER#${transferId}`;
export const depositKey = (depositId: string): string => `DEPOSIT#${depositId}`;
// JSON keeps (sub, key) unambiguous whatever characters either holds.
export const idempotencyKey = (sub: string, key: string): string =>
  `IDEMPOTENCY#${JSON.stringify([sub, key])}`;

/** The name of the index of entries by account, newest first by `seq`. */
export const HISTORY_INDEX = 'history';

/** One side of a movement, as stored. */
export interface EntryRecord {
  readonly account: string;
  readonly seq: number;
  readonly transferId: string;
  readonly transferKind: 'transfer' | 'deposit';
  readonly direction: 'in' | 'out';
  readonly amountMinor: number;
  /** The account's balance just after this entry (exact: a bigint beyond 2^53). */
  readonly balanceAfter: number | bigint;
  readonly counterpartyAccount: string;
  readonly counterpartySeq: number;
  readonly currency: string;
  readonly createdAt: string;
}
