/** One broken invariant, named so an operator can find the item. */
export interface AuditBreak {
  readonly invariant:
    | 'entry-missing'
    | 'running-balance'
    | 'balance-vs-entries'
    | 'negative-balance'
    | 'entry-unpaired'
    | 'transfer-mismatch'
    | 'transfer-entries'
    | 'entry-orphan'
    /** An entry, transfer or credit stored where its own fields do not put it: key or history index. */
    | 'item-misplaced'
    /**
     * An entry, transfer or credit whose amount is not a positive safe integer: money moved the wrong
     * way (or none), however well its items agree with each other.
     */
    | 'amount-not-positive'
    /** Paid into the clearing account, then neither in transit nor posted; or marked posted to no entry. */
    | 'credit-lost'
    /** A second entry posting one credit, or an entry posting a credit not marked posted. */
    | 'credit-posted-twice'
    /** A batch posted and not completed long after the sweep should have completed it. */
    | 'batch-uncompleted'
    /** A credit in transit for longer than the poster could take (CREDIT_STUCK_MS): re-drive it. */
    | 'credit-stuck'
    /** A credit that states another payment than its payer's entry, transfer or posting. */
    | 'credit-mismatch'
    /** The credits in transit do not sum to what the entries through the clearing account leave in it. */
    | 'clearing-balance'
    /** A bucket of settled movements whose sums differ, scanned twice, with no item of it named. */
    | 'bucket-unbalanced'
    /** A deposit's transfer with no claim on its id, or a claim that states another deposit. */
    | 'deposit-unclaimed'
    /** A claim on a deposit id whose transfer is missing or is not that deposit. */
    | 'deposit-claim-orphan'
    | 'grand-total'
    /** Two wallets whose addresses share a UTS #39 confusable skeleton: a payer cannot tell them apart. */
    | 'lookalike-wallets';
  /** The item's key ("CLEARING" for the clearing account's balance, "ledger" for the grand total). */
  readonly subject: string;
  readonly detail: string;
}

/** Records a break. */
export type Broken = (invariant: AuditBreak['invariant'], subject: string, detail: string) => void;
