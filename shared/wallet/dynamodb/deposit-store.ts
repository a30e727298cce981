import { randomUUID } from 'node:crypto';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { MAX_BALANCE_MINOR } from '../model/money.ts';
import { retryMovement } from '../model/movement-retry.ts';
import { accountKey, depositKey, ISSUANCE_ACCOUNT, transferKey, walletAccount, walletKey } from './keys.ts';
import { createLedgerCommit, sideEntry, stateOf, type WalletTableAccess } from './ledger-commit.ts';
import { skeletonClaim } from './wallet-opening.ts';

const DEPOSIT_DEADLINE_MS = 30_000;

/* Funding: money entering the ledger from outside. A module of its own because only the operator's
   `wallet:fund` (scripts/wallet-fund.ts) records deposits: no function imports it, so no bundle
   carries this code. */

/** A funding credit from outside the system, immutable once recorded. */
export interface DepositRecord {
  readonly depositId: string;
  readonly address: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
}

export type DepositOutcome =
  | { readonly kind: 'recorded' }
  /** A deposit with this id was recorded before (a re-run): this is it, and nothing moved again. */
  | { readonly kind: 'already-recorded'; readonly deposit: DepositRecord }
  /** The credit would take the balance past {@link MAX_BALANCE_MINOR}; nothing changed. */
  | { readonly kind: 'balance-limit' }
  /**
   * No wallet is open at the address, and none may open: it looks like the address of the wallet
   * `holder` (their UTS #39 skeletons are equal). Nothing changed.
   */
  | { readonly kind: 'lookalike'; readonly holder: string };

/** The deposits of the wallet ledger, over one table through one client. */
export function createDepositLedger(access: WalletTableAccess) {
  const ledger = createLedgerCommit(access);

  /**
   * Credits a wallet from outside the system (funding, which opens the wallet if need be), in
   * double entry: the issuance account is debited by the same amount, so that every balance,
   * issuance included, sums to zero. Once per deposit id: the deposit's claim is written on
   * condition that the id is new, so re-running a funding that did commit changes nothing and
   * returns the deposit recorded first. One read of the three items, then one transaction; one that
   * opens the wallet also claims its address's skeleton (./wallet-opening.ts).
   */
  async function recordDeposit(deposit: DepositRecord): Promise<DepositOutcome> {
    if (!Number.isSafeInteger(deposit.amountMinor) || deposit.amountMinor > MAX_BALANCE_MINOR) {
      return { kind: 'balance-limit' };
    }
    const wallet = walletAccount(deposit.address);
    const amount = BigInt(deposit.amountMinor);
    const transferId = randomUUID();
    return retryMovement<DepositOutcome>(
      // The operator's command has no function timeout to stay under, and every deposit waits for
      // the others on the one issuance account: it may keep trying for longer than a request.
      { at: Date.now() + DEPOSIT_DEADLINE_MS, message: 'The accounts are busy; retry the deposit' },
      async (_attempt, beforeWrite) => {
        const read = await ledger.readMany([
          walletKey(deposit.address),
          accountKey(ISSUANCE_ACCOUNT),
          depositKey(deposit.depositId),
        ]);
        const earlier = read.get(depositKey(deposit.depositId));
        if (earlier) return { done: recordedBefore(earlier, transferId) };
        const credited = { account: wallet, state: stateOf(read.get(walletKey(deposit.address))) };
        const issuance = {
          account: ISSUANCE_ACCOUNT,
          state: stateOf(read.get(accountKey(ISSUANCE_ACCOUNT))),
        };
        if (credited.state.balance + amount > BigInt(MAX_BALANCE_MINOR))
          return { done: { kind: 'balance-limit' } };
        const now = deposit.createdAt;
        const movement = { transferId, transferKind: 'deposit' as const, ...deposit };
        beforeWrite();
        const result = await ledger.commit(
          {
            wallet: ledger.accountUpdate(wallet, credited.state, amount, now),
            issuance: ledger.accountUpdate(ISSUANCE_ACCOUNT, issuance.state, -amount, now),
            claim: ledger.put(
              { pk: depositKey(deposit.depositId), kind: 'deposit', ...deposit, transferId },
              true,
            ),
            transfer: ledger.put({
              pk: transferKey(transferId),
              kind: 'transfer',
              transferKind: 'deposit',
              transferId,
              depositId: deposit.depositId,
              toAddress: deposit.address,
              amountMinor: deposit.amountMinor,
              currency: deposit.currency,
              createdAt: deposit.createdAt,
              fromSeq: issuance.state.seq + 1,
              toSeq: credited.state.seq + 1,
            }),
            issuanceEntry: ledger.entryPut(
              sideEntry(movement, issuance, 'out', { account: wallet, seq: credited.state.seq + 1 }),
            ),
            walletEntry: ledger.entryPut(
              sideEntry(movement, credited, 'in', { account: ISSUANCE_ACCOUNT, seq: issuance.state.seq + 1 }),
            ),
            ...(credited.state.exists ? {} : { skeleton: skeletonClaim(ledger.tableName, deposit.address) }),
          },
          randomUUID(),
        );
        if (result.committed) return { done: { kind: 'recorded' } };
        const { claim, transfer, skeleton } = result.refused;
        if (claim?.code === 'ConditionalCheckFailed' && claim.item) {
          return { done: recordedBefore(unmarshall(claim.item), transferId) };
        }
        if (transfer?.code === 'ConditionalCheckFailed') return { done: { kind: 'recorded' } };
        // Held by another wallet: refused for good. (Opened meanwhile, the wallet refuses too: read again.)
        if (skeleton?.code === 'ConditionalCheckFailed' && skeleton.item && !result.refused.wallet) {
          return { done: { kind: 'lookalike', holder: String(unmarshall(skeleton.item).address) } };
        }
        return { again: 'after-pause' };
      },
    );
  }

  /** The answer to a deposit id found recorded: our own earlier attempt, or another deposit. */
  function recordedBefore(item: Record<string, unknown>, transferId: string): DepositOutcome {
    if (item.transferId === transferId) return { kind: 'recorded' };
    const { depositId, address, amountMinor, currency, createdAt } = item as unknown as DepositRecord;
    return { kind: 'already-recorded', deposit: { depositId, address, amountMinor, currency, createdAt } };
  }

  return { recordDeposit };
}
