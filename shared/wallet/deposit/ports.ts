import type { AccountState } from '../model/accounts.ts';

/* The port of funding: what `makeRecordDeposit` (./record-deposit.ts) needs of the ledger;
   implemented by ../dynamodb/deposit-store.ts. */

/** A funding credit from outside the system, immutable once recorded. */
export interface DepositRecord {
  readonly depositId: string;
  readonly address: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
}

/** A deposit id's claim found recorded: the deposit, the movement it made, and the try that made it. */
export interface RecordedDeposit {
  readonly deposit: DepositRecord;
  readonly transferId: string;
  /** Absent on claims recorded before the movement's id came from the deposit id. */
  readonly attempt?: string | undefined;
}

/** What a deposit depends on, read together: the wallet, the issuance account, and the id's claim. */
export interface DepositState {
  readonly wallet: AccountState;
  readonly issuance: AccountState;
  readonly earlier?: RecordedDeposit | undefined;
}

/** One write of a deposit: the movement `transferId`, by the try `attempt`, on the accounts as read. */
export interface DepositPlan {
  readonly deposit: DepositRecord;
  readonly transferId: string;
  readonly attempt: string;
  readonly wallet: AccountState;
  readonly issuance: AccountState;
}

export type DepositCommit =
  | { readonly kind: 'committed' }
  /** The id was claimed meanwhile (by this plan's own earlier try, or another deposit). */
  | { readonly kind: 'claimed'; readonly earlier: RecordedDeposit }
  /** An account moved on since it was read, or is in another transaction: read again. */
  | { readonly kind: 'moved' }
  /** The movement's id is another movement's (a transfer's id given as deposit id): nothing was written. */
  | { readonly kind: 'id-taken' }
  /** No wallet is open at the address and none may open: `holder`'s wallet holds its skeleton. */
  | { readonly kind: 'lookalike'; readonly holder: string };

export interface DepositStore {
  /** One strongly consistent read of the wallet, the issuance account and the deposit id's claim. */
  read(deposit: DepositRecord): Promise<DepositState>;
  /**
   * Writes the deposit in ONE transaction, in double entry (the wallet credited, the issuance
   * account debited, an entry each), on condition that both accounts are as read and the id is new;
   * one that opens the wallet claims its address's UTS #39 skeleton in the same transaction.
   */
  commit(plan: DepositPlan): Promise<DepositCommit>;
}
