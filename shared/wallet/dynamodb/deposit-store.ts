import { randomUUID } from 'node:crypto';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  DepositCommit,
  DepositPlan,
  DepositRecord,
  DepositStore,
  RecordedDeposit,
} from '../deposit/ports.ts';
import { ISSUANCE_ACCOUNT, walletAccount } from '../model/accounts.ts';
import { accountKey, depositKey, transferKey, walletKey } from './keys.ts';
import { createLedgerCommit, sideEntry, stateOf } from './ledger-commit.ts';
import type { WalletTableAccess } from './table-access.ts';
import { skeletonClaim } from './wallet-opening.ts';

/** A deposit id's claim as stored: the deposit, and the movement that recorded it. */
function recordedOf(item: Record<string, unknown>): RecordedDeposit {
  const { depositId, address, amountMinor, currency, createdAt } = item as unknown as DepositRecord;
  return {
    deposit: { depositId, address, amountMinor, currency, createdAt },
    transferId: item.transferId as string,
    attempt: item.attempt as string | undefined,
  };
}

/** The deposits of the wallet ledger on its DynamoDB table: what `makeRecordDeposit` needs of it. */
export function createDepositStore(access: WalletTableAccess): DepositStore {
  const ledger = createLedgerCommit(access);

  /** ONE strongly consistent BatchGetItem of the wallet, the issuance account and the id's claim. */
  async function read(deposit: DepositRecord) {
    const found = await ledger.readMany([
      walletKey(deposit.address),
      accountKey(ISSUANCE_ACCOUNT),
      depositKey(deposit.depositId),
    ]);
    const earlier = found.get(depositKey(deposit.depositId));
    return {
      wallet: stateOf(found.get(walletKey(deposit.address))),
      issuance: stateOf(found.get(accountKey(ISSUANCE_ACCOUNT))),
      earlier: earlier ? recordedOf(earlier) : undefined,
    };
  }

  /**
   * ONE TransactWriteItems: both accounts (on condition that they are as read), the deposit id's
   * claim (on condition that it is new), the movement's record and its two entries; one that opens
   * the wallet also claims its address's skeleton (./wallet-opening.ts).
   */
  async function commit({
    deposit,
    transferId,
    attempt,
    wallet,
    issuance,
  }: DepositPlan): Promise<DepositCommit> {
    const credited = { account: walletAccount(deposit.address), state: wallet };
    const debited = { account: ISSUANCE_ACCOUNT, state: issuance };
    const amount = BigInt(deposit.amountMinor);
    const now = deposit.createdAt;
    const movement = { transferId, transferKind: 'deposit' as const, ...deposit };
    const result = await ledger.commit(
      {
        wallet: ledger.accountUpdate(credited.account, wallet, amount, now),
        issuance: ledger.accountUpdate(ISSUANCE_ACCOUNT, issuance, -amount, now),
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
          fromSeq: issuance.seq + 1,
          toSeq: wallet.seq + 1,
        }),
        issuanceEntry: ledger.entryPut(
          sideEntry(movement, debited, 'out', { account: credited.account, seq: wallet.seq + 1 }),
        ),
        walletEntry: ledger.entryPut(
          sideEntry(movement, credited, 'in', { account: ISSUANCE_ACCOUNT, seq: issuance.seq + 1 }),
        ),
        ...(wallet.exists ? {} : { skeleton: skeletonClaim(access.tableName, deposit.address) }),
      },
      randomUUID(),
    );
    if (result.committed) return { kind: 'committed' };
    const { claim, transfer, skeleton } = result.refused;
    if (claim?.code === 'ConditionalCheckFailed' && claim.item) {
      return { kind: 'claimed', earlier: recordedOf(unmarshall(claim.item)) };
    }
    // An earlier try of this very deposit that committed would have refused the claim too: the
    // movement's id is another movement's.
    if (transfer?.code === 'ConditionalCheckFailed') return { kind: 'id-taken' };
    // Held by another wallet: refused for good. (Opened meanwhile, the wallet refuses too: read again.)
    if (skeleton?.code === 'ConditionalCheckFailed' && skeleton.item && !result.refused.wallet) {
      return { kind: 'lookalike', holder: String(unmarshall(skeleton.item).address) };
    }
    return { kind: 'moved' };
  }

  return { read, commit };
}
