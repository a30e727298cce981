import type { CreditBatch } from './credit-batch.ts';

/**
 * What the sweep of batches posted and not completed needs of the ledger (./sweep-batches.ts),
 * implemented by shared/wallet/dynamodb/credit-store.ts and pending-index.ts.
 */
export interface BatchSweepStore {
  /** The oldest batches posted and not yet completed, of every wallet: up to `perShard` of each shard. */
  postedUncompleted(perShard: number): Promise<CreditBatch[]>;
  /** `BatchLedger.complete`: `completed` when this completer's write did it, answer lost or not. */
  complete(
    batch: CreditBatch,
    completedAt: string,
    completer: string,
  ): Promise<'completed' | 'already' | 'busy'>;
}
