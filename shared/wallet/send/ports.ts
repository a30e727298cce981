import type { HotRecipient, RecipientView } from '../hot-wallet/router.ts';
import type { AccountState } from '../model/accounts.ts';
import type { TransferRecord } from '../model/transfer.ts';

/* The ports of sending money: what `makeSendMoney` (./send-money.ts) needs of the ledger. The
   hot-wallet router's own ports are in ../hot-wallet/ports.ts. */

/** An Idempotency-Key claimed by the transaction that uses it. */
export interface IdempotencyClaim {
  readonly sub: string;
  readonly key: string;
  /** Epoch seconds after which DynamoDB TTL may delete the record and the key is free again. */
  readonly expiresAt: number;
}

/** What a transfer depends on, read together before it is written. */
export interface TransferState extends RecipientView {
  readonly payer: AccountState;
  /** The key's claim, when the key was used before. */
  readonly claimed?: { readonly transfer: TransferRecord; readonly expiresAt: number };
}

/** One write of a transfer: its payer's side, and where the credit goes. */
export interface TransferPlan {
  readonly transfer: TransferRecord;
  readonly claim?: IdempotencyClaim | undefined;
  readonly payer: AccountState;
  readonly route:
    | { readonly kind: 'direct'; readonly recipient: AccountState }
    | { readonly kind: 'clearing' };
  /** 1 for the first write of this request, then 2, 3, … for each new version after a refusal. */
  readonly attempt: number;
}

export type TransferCommit =
  | { readonly kind: 'committed' }
  /** The key was claimed meanwhile: the transfer it made. */
  | { readonly kind: 'key-claimed'; readonly transfer: TransferRecord }
  /** The payer's account changed since it was read (another of its movements): read again. */
  | {
      readonly kind: 'payer-moved';
      /** Another transaction on the payer's items is still in flight (else it has committed: read again at once). */
      readonly inFlight: boolean;
    }
  /**
   * The recipient's account changed or is in another transaction: it is contended. When the
   * payer's items were not refused too, what was read of the payer still holds.
   */
  | { readonly kind: 'recipient-busy'; readonly payerMoved: boolean };

/** The ledger as sending money needs it; implemented by ../dynamodb/transfer-store.ts. */
export interface TransferStore {
  /**
   * One read of what the transfer depends on: the payer's wallet, the key's claim and, unless it
   * is given as `known`, the recipient's wallet and hot marker.
   */
  read(transfer: TransferRecord, claim?: IdempotencyClaim, known?: HotRecipient): Promise<TransferState>;
  /**
   * Writes the plan in one transaction, applied at most once however often it is retried: the
   * transfer record is written on condition that its id is new.
   */
  commit(plan: TransferPlan): Promise<TransferCommit>;
  /** The longest a commit can take before it answers or fails (every retry included). */
  readonly longestCommitMs: number;
  /**
   * Whether the money of a transfer through the clearing account is the recipient's (its status
   * `completed`, as the history and a lookup answer it), for a replayed key's answer.
   */
  creditPosted(transferId: string): Promise<boolean>;
  /** Opens the payer's wallet; a lookalike address stays without one, and is refused all the same. */
  openWallet(address: string, openedAt: string): Promise<unknown>;
}
