import { createHash, randomUUID } from 'node:crypto';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { MAX_BALANCE_MINOR } from '../model/money.ts';
import { retryMovement } from '../model/movement-retry.ts';
import { accountKey, depositKey, ISSUANCE_ACCOUNT, transferKey, walletAccount, walletKey } from './keys.ts';
import { createLedgerCommit, sideEntry, stateOf, type WalletTableAccess } from './ledger-commit.ts';

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
  /** The deposit's transfer id names another movement (a transfer's id given as deposit id); nothing changed. */
  | { readonly kind: 'id-taken' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The id a deposit has in the history and at `GET /api/wallet/transfers/{transferId}`: its deposit
 * id itself when that is a UUID (what `wallet:fund` makes), so that the operator's id is the one
 * the API shows; otherwise a UUID derived from it (RFC 9562 version 8, from SHA-256), the same on
 * every re-run.
 */
export function depositTransferId(depositId: string): string {
  if (UUID.test(depositId)) return depositId;
  const hex = createHash('sha256').update(`deposit:${depositId}`).digest('hex');
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The deposits of the wallet ledger, over one table through one client. */
export function createDepositLedger(access: WalletTableAccess) {
  const ledger = createLedgerCommit(access);

  /**
   * Credits a wallet from outside the system (funding, which opens the wallet if need be), in
   * double entry: the issuance account is debited by the same amount, so that every balance,
   * issuance included, sums to zero. Once per deposit id: the deposit's claim is written on
   * condition that the id is new, so re-running a funding that did commit changes nothing and
   * returns the deposit recorded first. One read of the three items, then one transaction.
   */
  async function recordDeposit(deposit: DepositRecord): Promise<DepositOutcome> {
    if (!Number.isSafeInteger(deposit.amountMinor) || deposit.amountMinor > MAX_BALANCE_MINOR) {
      return { kind: 'balance-limit' };
    }
    const wallet = walletAccount(deposit.address);
    const amount = BigInt(deposit.amountMinor);
    const transferId = depositTransferId(deposit.depositId);
    // Tells this call's own commit, found on a retry after a lost answer, from an earlier run's.
    const attempt = randomUUID();
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
        if (earlier) return { done: recordedBefore(earlier, attempt) };
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
              { pk: depositKey(deposit.depositId), kind: 'deposit', ...deposit, transferId, attempt },
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
          },
          randomUUID(),
        );
        if (result.committed) return { done: { kind: 'recorded' } };
        const { claim, transfer } = result.refused;
        if (claim?.code === 'ConditionalCheckFailed' && claim.item) {
          return { done: recordedBefore(unmarshall(claim.item), attempt) };
        }
        // Our own earlier commit would have refused the claim too: the id is another movement's.
        if (transfer?.code === 'ConditionalCheckFailed') return { done: { kind: 'id-taken' } };
        return { again: 'after-pause' };
      },
    );
  }

  /** The answer to a deposit id found recorded: our own earlier attempt, or another deposit. */
  function recordedBefore(item: Record<string, unknown>, attempt: string): DepositOutcome {
    if (item.attempt === attempt) return { kind: 'recorded' };
    const { depositId, address, amountMinor, currency, createdAt } = item as unknown as DepositRecord;
    return { kind: 'already-recorded', deposit: { depositId, address, amountMinor, currency, createdAt } };
  }

  return { recordDeposit };
}
