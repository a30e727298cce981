import type { EntryRecord } from '../model/entry.ts';
import type { Matching } from '../model/matching.ts';

/* The port of a wallet's history: what `makeListTransfers` and `makeGetTransfer`
   (./transfer-history.ts) need of the ledger; implemented by ../dynamodb/history-store.ts. */

/** A movement as stored: a transfer between two wallets, or a deposit from the issuance account. */
export interface MovementRecord {
  readonly transferId: string;
  readonly transferKind: 'transfer' | 'deposit';
  /** Absent for a deposit: the money came from outside. */
  readonly fromAddress?: string;
  readonly toAddress: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  /** `pending` while its credit is in transit to a hot wallet. */
  readonly status: 'pending' | 'completed';
  readonly reference?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** A credit on its way to a wallet, as its owner sees it before it is posted. */
export interface PendingCredit {
  readonly transferId: string;
  readonly fromAddress?: string | undefined;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
}

/** The reads of an account's history and of one movement. */
export interface HistoryStore {
  /**
   * Up to `limit` of the account's entries, newest first, from `seq` `atOrBelow` down when given;
   * on the first page (no `atOrBelow`), also its newest `limit` credits in transit. A credit posted
   * while the page is read may be in both lists, never in neither: the caller lists it once.
   */
  page(
    address: string,
    limit: number,
    atOrBelow?: number,
  ): Promise<{ entries: EntryRecord[]; pending: PendingCredit[] }>;
  /**
   * The account's entry numbered `seq`, strongly consistent: whether a cursor's entry, or the one
   * below it, which the index has not shown, is really there. Given `transferId`, the transfer the
   * entry should be of, also a credit's entry that a batch posted and not completed holds.
   */
  entryAt(address: string, seq: number, transferId?: string): Promise<EntryRecord | undefined>;
  /** One movement by id and its credit's state, strongly consistent. */
  movement(transferId: string): Promise<MovementRecord | undefined>;
  /** Which of these transfers' credits are still in transit. */
  creditsInTransit(transferIds: readonly string[]): Promise<Set<string>>;
  /** The `reference` and `metadata` of transfers whose entries do not carry them (posted credits'). */
  matching?(transferIds: readonly string[]): Promise<Map<string, Matching>>;
}
