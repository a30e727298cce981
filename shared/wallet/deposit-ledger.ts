import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import {
  accountKey,
  depositKey,
  ISSUANCE_ACCOUNT,
  transferKey,
  walletAccount,
  walletKey,
} from './ledger-keys.ts';
import {
  awaitNextVersion,
  busy,
  cancellationReasons,
  createLedgerWrites,
  stateOf,
  VERSION_DEADLINE_MS,
  type WalletTableAccess,
} from './ledger-writes.ts';
import { MAX_BALANCE_MINOR } from './money.ts';

/* Funding: money entering the ledger from outside. A module of its own because only the operator's
   `wallet:fund` (scripts/wallet-fund.ts) records deposits; the functions import ./wallet-repository.ts
   and so carry none of this code. */

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
  | { readonly kind: 'balance-limit' };

/** The deposits of the wallet ledger, over one table through one client. */
export function createDepositLedger({ client, tableName }: WalletTableAccess) {
  const { readMany, accountUpdate, entryPuts } = createLedgerWrites({ client, tableName });

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
    const transferId = randomUUID();
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const read = await readMany([
        walletKey(deposit.address),
        accountKey(ISSUANCE_ACCOUNT),
        depositKey(deposit.depositId),
      ]);
      const earlier = read.get(depositKey(deposit.depositId));
      if (earlier) return recordedBefore(earlier, transferId);
      const credited = stateOf(read.get(walletKey(deposit.address)));
      const issuance = stateOf(read.get(accountKey(ISSUANCE_ACCOUNT)));
      if (credited.balance + amount > BigInt(MAX_BALANCE_MINOR)) return { kind: 'balance-limit' };
      if (Date.now() - started > VERSION_DEADLINE_MS) throw busy('The accounts are busy; retry the deposit');
      const now = deposit.createdAt;
      const movement = { transferId, transferKind: 'deposit' as const, ...deposit };
      try {
        await withRetries(() =>
          client.send(
            new TransactWriteCommand({
              TransactItems: [
                accountUpdate(wallet, credited, amount, now),
                accountUpdate(ISSUANCE_ACCOUNT, issuance, -amount, now),
                {
                  Put: {
                    TableName: tableName,
                    Item: { pk: depositKey(deposit.depositId), kind: 'deposit', ...deposit, transferId },
                    ConditionExpression: 'attribute_not_exists(pk)',
                    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                  },
                },
                {
                  Put: {
                    TableName: tableName,
                    Item: {
                      pk: transferKey(transferId),
                      kind: 'transfer',
                      transferKind: 'deposit',
                      transferId,
                      depositId: deposit.depositId,
                      toAddress: deposit.address,
                      amountMinor: deposit.amountMinor,
                      currency: deposit.currency,
                      createdAt: deposit.createdAt,
                      fromSeq: issuance.seq + 1,
                      toSeq: credited.seq + 1,
                    },
                    ConditionExpression: 'attribute_not_exists(pk)',
                  },
                },
                ...entryPuts(
                  movement,
                  { account: ISSUANCE_ACCOUNT, state: issuance },
                  { account: wallet, state: credited },
                ),
              ],
            }),
          ),
        );
        return { kind: 'recorded' };
      } catch (error) {
        const reasons = cancellationReasons(error);
        if (!reasons) throw error;
        const claimReason = reasons[2];
        if (claimReason?.Code === 'ConditionalCheckFailed' && claimReason.Item) {
          return recordedBefore(unmarshall(claimReason.Item), transferId);
        }
        if (reasons[3]?.Code === 'ConditionalCheckFailed') return { kind: 'recorded' };
        await awaitNextVersion(reasons, error, {
          attempt,
          started,
          message: 'The accounts are busy; retry the deposit',
        });
      }
    }
  }

  /** The answer to a deposit id found recorded: our own earlier attempt, or another deposit. */
  function recordedBefore(item: Record<string, unknown>, transferId: string): DepositOutcome {
    if (item.transferId === transferId) return { kind: 'recorded' };
    const { depositId, address, amountMinor, currency, createdAt } = item as unknown as DepositRecord;
    return { kind: 'already-recorded', deposit: { depositId, address, amountMinor, currency, createdAt } };
  }

  return { recordDeposit };
}
