/** A transfer as asked for and as answered: immutable once written. */
export interface TransferRecord {
  readonly transferId: string;
  readonly fromAddress: string;
  readonly toAddress: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  /** Set when the credit went through the clearing account: the recipient is credited when it is posted. */
  readonly via?: 'clearing';
}

/** A sent transfer's status: `pending` while its credit is in transit to a hot wallet. */
export type TransferStatus = 'pending' | 'completed';
