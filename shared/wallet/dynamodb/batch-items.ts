import {
  type BatchedCredit,
  type BatchPosting,
  batchSum,
  type CreditBatch,
} from '../hot-wallet/credit-batch.ts';
import { addressOfAccount, CLEARING_ACCOUNT, walletAccount } from '../model/accounts.ts';
import type { EntryRecord } from '../model/entry.ts';
import { batchKey, pendingShardKey } from './keys.ts';
import { exact, sideEntry } from './ledger-commit.ts';

/* The items postings of credits write: their entries (on one level, or from a batch), and batches. */

/**
 * A batch as its item stores it. Until posted it carries `pendingFor` (a `pending` shard of its
 * wallet) and its sum as `amountMinor`, so that the pending index holds it as one credit of that
 * amount, dated by its oldest credit, in place of the credits it took out of that index.
 */
export function batchItem(batch: CreditBatch, batchedAt: string): Record<string, unknown> {
  const oldest = batch.credits.map((credit) => credit.createdAt).sort()[0] ?? batchedAt;
  return {
    pk: batchKey(batch.batchId),
    kind: 'batch',
    batchId: batch.batchId,
    toAccount: walletAccount(batch.address),
    credits: batch.credits,
    amountMinor: exact(batchSum(batch)),
    createdAt: oldest,
    batchedAt,
    pendingFor: pendingShardKey(batch.address, batch.batchId),
  };
}

/**
 * The entries `credits` give the wallet at `address` posted after `before` (its balance and seq):
 * consecutive seqs, each with its exact running balance, dated `postedAt` (when the money became the
 * wallet's: the posting, whichever step writes them).
 * A one-level posting writes them in its transaction; a batch's completion writes its own, and
 * the ledger audit derives those of a batch posted and not yet completed.
 */
export function postedEntries(
  address: string,
  before: { readonly balance: bigint; readonly seq: number },
  credits: readonly BatchedCredit[],
  postedAt: string,
): EntryRecord[] {
  const account = walletAccount(address);
  let state = { exists: true, balance: before.balance, seq: before.seq };
  return credits.map((credit) => {
    const entry = {
      ...sideEntry({ ...credit, transferKind: 'transfer' }, { account, state }, 'in', {
        account: CLEARING_ACCOUNT,
        seq: credit.fromSeq,
        address: addressOfAccount(credit.fromAccount),
      }),
      postedAt,
    };
    state = { exists: true, balance: BigInt(entry.balanceAfter), seq: entry.seq };
    return entry;
  });
}

/** The entries a posted batch gives its wallet: its credits from `firstSeq` on. */
export const entriesOfBatch = (batch: CreditBatch, posting: BatchPosting, postedAt: string): EntryRecord[] =>
  postedEntries(
    batch.address,
    { balance: posting.balanceBefore, seq: posting.firstSeq - 1 },
    batch.credits,
    postedAt,
  );
