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
  /** A wallet, the issuance account, or the clearing account for a payment to a hot wallet. */
  readonly counterpartyAccount: string;
  /** The counterparty's entry: for a clearing entry, the paying or paid wallet's entry when known. */
  readonly counterpartySeq?: number;
  /** The other wallet of a payment through the clearing account (its counterparty account is CLEARING). */
  readonly counterpartyAddress?: string;
  readonly currency: string;
  readonly createdAt: string;
  /**
   * When the credit poster wrote this entry of a payment through the clearing account (its
   * `createdAt` is the payment's): the ledger audit tells settled entries from recent ones by it.
   */
  readonly postedAt?: string;
  /**
   * The transfer's `reference` and `metadata`, on the entries its own transaction writes (the
   * payer's, and a direct credit's). A posted credit's entry has none: a batch lists up to 49
   * credits in one item, which their metadata (up to about 43 KB each) would take past 400 KB;
   * readers take them from the transfer's item.
   */
  readonly reference?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /**
   * On an entry a batch's completion wrote: that batch. Its posting told the entry's webhook event
   * first (shared/webhooks/dynamodb/ledger-facts.ts, `factsOfBatchPosting`).
   */
  readonly batchId?: string;
}
