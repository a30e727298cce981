/* The accounts of the double-entry ledger, as the use cases and the adapters name them. */

/** The account of the issuance account in entries and the history index. */
export const ISSUANCE_ACCOUNT = 'ISSUANCE';

/**
 * The clearing (in-transit) account: the counterparty of both entries of a payment to a hot
 * wallet. It has no item: its balance is the sum of the credits not yet posted, so no payment
 * ever waits for another on it.
 */
export const CLEARING_ACCOUNT = 'CLEARING';

/** The account of a wallet in entries and the history index: never equal to {@link ISSUANCE_ACCOUNT}. */
export const walletAccount = (address: string): string => `W#${address}`;

/** The address of a wallet account; `undefined` for the issuance and the clearing account. */
export const addressOfAccount = (account: string): string | undefined =>
  account.startsWith('W#') ? account.slice(2) : undefined;

/** An account as read before a movement: what its transaction's condition expects to find. */
export interface AccountState {
  readonly exists: boolean;
  readonly balance: bigint;
  readonly seq: number;
}
