/* The port of the balance: what `makeGetBalance` (./get-balance.ts) needs of the ledger. */

/** A wallet's balance as read. */
export interface WalletRecord {
  /** What can be spent: posted money only. Exact whatever its size. */
  readonly balanceMinor: bigint;
  /** Credits paid to it and still in transit through the clearing account. */
  readonly pendingMinor: bigint;
  readonly updatedAt?: string;
}

/** The ledger as the balance needs it; implemented by ../dynamodb/balance-store.ts. */
export interface BalanceStore {
  readWallet(address: string): Promise<WalletRecord | undefined>;
  /** `lookalike`: another wallet holds the address's confusable skeleton, and none opens. */
  openWallet(address: string, openedAt: string): Promise<'open' | 'lookalike'>;
}
