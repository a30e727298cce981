/**
 * What the deriver reads of the ledger: one inserted item of the wallets table, as a fact about a
 * wallet (docs/decisions/webhooks.md, "Events from the stream"). The adapter that reads the items
 * is shared/webhooks/dynamodb/ledger-facts.ts; these types know no item layout.
 */
import type { Matching } from '../../wallet/model/matching.ts';

/** One side of a movement on a wallet: an entry with its number and the balance after it. */
export interface EntryFact extends Matching {
  readonly kind: 'entry';
  /** Unique per entry (its item key): what its event's id is derived from. */
  readonly factKey: string;
  readonly address: string;
  readonly seq: number;
  readonly balanceAfterMinor: bigint;
  readonly transferId: string;
  readonly movement: 'transfer' | 'deposit';
  readonly direction: 'in' | 'out';
  readonly amountMinor: number;
  readonly currency: string;
  /** The other wallet; absent for a deposit. */
  readonly counterparty?: string | undefined;
  /** The movement's time. */
  readonly createdAt: string;
  /** For a credit posted from the clearing account: when it was posted (the money became spendable). */
  readonly postedAt?: string | undefined;
  /** The payment went through the clearing account (the recipient is credited when it is posted). */
  readonly viaClearing: boolean;
  /**
   * The entry as a batch's completion wrote it: its batch's posting told the same fact first, and
   * owns its events' delivery tasks. Told again only if that posting was not (posted by code that
   * told no postings).
   */
  readonly retold?: true;
}

/** A transfer between two wallets, accepted: the recipient is told at once, with its status. */
export interface TransferFact extends Matching {
  readonly kind: 'transfer';
  readonly transferId: string;
  readonly fromAddress: string;
  readonly toAddress: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  readonly viaClearing: boolean;
}

export type LedgerFact = EntryFact | TransferFact;
