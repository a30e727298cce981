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
    | 'grand-total';
  /** The item's key (or "ledger" for the grand total). */
  readonly subject: string;
  readonly detail: string;
}

/** Records a break. */
export type Broken = (invariant: AuditBreak['invariant'], subject: string, detail: string) => void;
