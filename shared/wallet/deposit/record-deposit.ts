import { MAX_BALANCE_MINOR } from '../model/money.ts';
import { retryMovement } from '../model/movement-retry.ts';
import type { IdSource } from '../model/ports.ts';
import type { DepositRecord, DepositStore, RecordedDeposit } from './ports.ts';
import { depositTransferId } from './transfer-id.ts';

/** How long a deposit keeps trying: every deposit waits for the others on the one issuance account. */
const DEPOSIT_DEADLINE_MS = 30_000;

export type DepositOutcome =
  | { readonly kind: 'recorded' }
  /** A deposit with this id was recorded before (a re-run): this is it, and nothing moved again. */
  | { readonly kind: 'already-recorded'; readonly deposit: DepositRecord }
  /** The credit would take the balance past {@link MAX_BALANCE_MINOR}; nothing changed. */
  | { readonly kind: 'balance-limit' }
  /** The amount is zero or negative, which would debit the wallet; nothing changed. */
  | { readonly kind: 'not-positive' }
  /** The deposit's transfer id names another movement (a transfer's id given as deposit id); nothing changed. */
  | { readonly kind: 'id-taken' }
  /**
   * No wallet is open at the address, and none may open: it looks like the address of the wallet
   * `holder` (their UTS #39 skeletons are equal). Nothing changed.
   */
  | { readonly kind: 'lookalike'; readonly holder: string };

/*
 * Funding: money entering the ledger from outside. Only the operator's `wallet:fund`
 * (scripts/wallet-fund.ts) records deposits: no function imports this room, so no bundle carries it.
 */

/**
 * Credits a wallet from outside the system (funding, which opens the wallet if need be), in double
 * entry: the issuance account is debited by the same amount, so that every balance, issuance
 * included, sums to zero. Once per deposit id: re-running a funding that did commit changes nothing
 * and answers the deposit recorded first. One read, then one transaction, again while the accounts
 * are busy (the operator's command has no function timeout to stay under).
 */
export function makeRecordDeposit({ deposits, ids }: { deposits: DepositStore; ids: IdSource }) {
  return async (deposit: DepositRecord): Promise<DepositOutcome> => {
    if (!Number.isSafeInteger(deposit.amountMinor) || deposit.amountMinor > MAX_BALANCE_MINOR) {
      return { kind: 'balance-limit' };
    }
    // The command's parser refuses these, but the ledger must not trust its callers: the movement
    // would take money from the wallet and give it to the issuance account.
    if (deposit.amountMinor <= 0) return { kind: 'not-positive' };
    // One id per deposit: the one the operator holds is the one the history shows.
    const transferId = depositTransferId(deposit.depositId);
    // Tells this call's own commit, found on a retry after a lost answer, from an earlier run's.
    const attempt = ids.next();
    /** The answer to a deposit id found recorded: our own earlier try, or another deposit. */
    const recordedBefore = (earlier: RecordedDeposit): DepositOutcome =>
      earlier.attempt === attempt
        ? { kind: 'recorded' }
        : { kind: 'already-recorded', deposit: earlier.deposit };
    return retryMovement<DepositOutcome>(
      { at: Date.now() + DEPOSIT_DEADLINE_MS, message: 'The accounts are busy; retry the deposit' },
      async (_attempt, beforeWrite) => {
        const { wallet, issuance, earlier } = await deposits.read(deposit);
        if (earlier) return { done: recordedBefore(earlier) };
        if (wallet.balance + BigInt(deposit.amountMinor) > BigInt(MAX_BALANCE_MINOR)) {
          return { done: { kind: 'balance-limit' } };
        }
        beforeWrite();
        const result = await deposits.commit({ deposit, transferId, attempt, wallet, issuance });
        switch (result.kind) {
          case 'committed':
            return { done: { kind: 'recorded' } };
          case 'claimed':
            return { done: recordedBefore(result.earlier) };
          case 'moved':
            return { again: 'after-pause' };
          case 'id-taken':
            return { done: { kind: 'id-taken' } };
          case 'lookalike':
            return { done: result };
        }
      },
    );
  };
}
