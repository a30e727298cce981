import { randomUUID } from 'node:crypto';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { defaultRetryPolicy, worstCaseCallMs } from '../../dynamodb/retry.ts';
import { TemporarilyUnavailableError } from '../../errors.ts';
import type { HotRecipient } from '../hot-wallet/router.ts';
import { CLEARING_ACCOUNT, walletAccount } from '../model/accounts.ts';
import type { TransferRecord } from '../model/transfer.ts';
import type { TransferCommit, TransferPlan, TransferState, TransferStore } from '../send/ports.ts';
import { readItems } from './consistent-read.ts';
import { stillInTransit } from './credits-in-transit.ts';
import { creditKey, idempotencyKey, inboundKey, pendingShardKey, transferKey, walletKey } from './keys.ts';
import { createLedgerCommit, sideEntry, stateOf } from './ledger-commit.ts';
import type { WalletTableAccess } from './table-access.ts';
import { createWalletOpening } from './wallet-opening.ts';

/**
 * One try, for the read that settles a commit whose every answer was lost: it must fit in the send's
 * time (`longestCommitMs`), and a DynamoDB that cannot answer it leaves the 503 as it was.
 */
const SETTLING_READ = { ...defaultRetryPolicy, attempts: 1 };

/** The transfers of the wallet ledger on its DynamoDB table: what `makeSendMoney` needs of it. */
export function createTransferStore(access: WalletTableAccess): TransferStore {
  const ledger = createLedgerCommit(access);
  const { tableName } = access;

  /**
   * One strongly consistent BatchGetItem: the payer's wallet, the key's claim and, unless `known`,
   * the recipient's wallet and hot marker.
   */
  async function read(
    { fromAddress, toAddress }: TransferRecord,
    claim?: { sub: string; key: string },
    known?: HotRecipient,
  ) {
    const keys = [walletKey(fromAddress)];
    if (!known) keys.push(walletKey(toAddress), inboundKey(toAddress));
    if (claim) keys.push(idempotencyKey(claim.sub, claim.key));
    const found = await readItems(access, keys);
    const claimed = claim && found.get(idempotencyKey(claim.sub, claim.key));
    const recipient = found.get(walletKey(toAddress));
    return {
      payer: stateOf(found.get(walletKey(fromAddress))),
      ...(known ?? {
        recipient: stateOf(recipient),
        recipientDirectClaim: recipient?.directClaim as string | undefined,
        recipientHotUntil: (found.get(inboundKey(toAddress))?.hotUntil as number | undefined) ?? 0,
      }),
      ...(claimed
        ? {
            claimed: { transfer: claimed.transfer as TransferRecord, expiresAt: claimed.expiresAt as number },
          }
        : {}),
    } satisfies TransferState;
  }

  /**
   * ONE TransactWriteItems: the payer's account (on condition that it is as read: its entry's
   * running balance is exact), the payer's entry, the transfer record, the key's claim, and the
   * credit: directly on the recipient's account and entry, or, to a hot wallet, a credit in
   * transit that no other payment touches (the clearing account's side).
   */
  async function commit({ transfer, claim, payer, route, attempt }: TransferPlan): Promise<TransferCommit> {
    const from = { account: walletAccount(transfer.fromAddress), state: payer };
    const to = walletAccount(transfer.toAddress);
    const amount = BigInt(transfer.amountMinor);
    const now = transfer.createdAt;
    const movement = { ...transfer, transferKind: 'transfer' as const };
    const direct = route.kind === 'direct' ? { account: to, state: route.recipient } : undefined;
    const items = {
      payer: ledger.accountUpdate(from.account, payer, -amount, now),
      payerEntry: ledger.entryPut(
        direct
          ? sideEntry(movement, from, 'out', { account: to, seq: direct.state.seq + 1 })
          : sideEntry(movement, from, 'out', { account: CLEARING_ACCOUNT, address: transfer.toAddress }),
      ),
      transfer: ledger.put({
        pk: transferKey(transfer.transferId),
        kind: 'transfer',
        transferKind: 'transfer',
        ...transfer,
        fromSeq: payer.seq + 1,
        ...(direct ? { toSeq: direct.state.seq + 1 } : { via: 'clearing' }),
      }),
      ...(direct
        ? {
            recipient: ledger.accountUpdate(to, direct.state, amount, now, 1, transfer.transferId),
            recipientEntry: ledger.entryPut(
              sideEntry(movement, direct, 'in', { account: from.account, seq: payer.seq + 1 }),
            ),
          }
        : {
            credit: ledger.put({
              pk: creditKey(transfer.transferId),
              kind: 'credit',
              transferId: transfer.transferId,
              fromAccount: from.account,
              fromSeq: payer.seq + 1,
              toAccount: to,
              amountMinor: transfer.amountMinor,
              currency: transfer.currency,
              createdAt: transfer.createdAt,
              pendingFor: pendingShardKey(transfer.toAddress, transfer.transferId),
            }),
          }),
      ...(claim
        ? {
            claim: {
              Put: {
                TableName: tableName,
                Item: {
                  pk: idempotencyKey(claim.sub, claim.key),
                  kind: 'idempotency',
                  transfer: { ...transfer, ...(direct ? {} : { via: 'clearing' }) },
                  expiresAt: claim.expiresAt,
                },
                // An expired record may linger until TTL deletes it: the key is free all the same.
                ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowEpoch',
                ExpressionAttributeValues: { ':nowEpoch': Math.floor(Date.parse(now) / 1000) },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
              },
            },
          }
        : {}),
    };
    // The transfer id for the first version; a fresh token for each next one, as DynamoDB refuses a
    // token reused with other parameters.
    let result: Awaited<ReturnType<typeof ledger.commit>>;
    try {
      result = await ledger.commit(items, attempt === 1 ? transfer.transferId : randomUUID());
    } catch (error) {
      // Every try went unanswered (lost, timed out): the transaction may have committed all the
      // same, and a client without an Idempotency-Key that retried a 503 would pay twice. Its
      // transfer record, which only this transaction writes, says whether it did.
      if (error instanceof TemporarilyUnavailableError && (await recorded(transfer.transferId))) {
        return { kind: 'committed' };
      }
      throw error;
    }
    if (result.committed) return { kind: 'committed' };
    const { refused } = result;
    // Cancellation reasons come as DynamoDB sees them: the DocumentClient does not translate errors.
    if (refused.claim?.code === 'ConditionalCheckFailed' && refused.claim.item) {
      return { kind: 'key-claimed', transfer: unmarshall(refused.claim.item).transfer as TransferRecord };
    }
    // Our own transfer id exists only if an earlier attempt of this very call committed.
    if (refused.transfer?.code === 'ConditionalCheckFailed') return { kind: 'committed' };
    if (refused.recipient || refused.recipientEntry) {
      return { kind: 'recipient-busy', payerMoved: !!(refused.payer || refused.payerEntry) };
    }
    const inFlight = Object.values(refused).some((refusal) => refusal.code === 'TransactionConflict');
    return { kind: 'payer-moved', inFlight };
  }

  /** Whether the transfer record is there, in one try: false when it is not, or cannot be read. */
  async function recorded(transferId: string): Promise<boolean> {
    const key = transferKey(transferId);
    try {
      return (await readItems(access, [key], { policy: SETTLING_READ })).has(key);
    } catch {
      return false;
    }
  }

  /**
   * Whether the money of a transfer through the clearing account is the recipient's, as the
   * history and a lookup say: ONE BatchGetItem of its credit, and one of its batch, tried once,
   * while a posting has taken it and not completed it yet. Both fit the time a replay keeps for
   * them, {@link longestCommitMs} (a call and a call tried once).
   */
  async function creditPosted(transferId: string): Promise<boolean> {
    const found = await readItems(access, [creditKey(transferId)]);
    return !(await stillInTransit(access, [transferId], found, SETTLING_READ)).has(transferId);
  }

  return {
    read,
    commit,
    // A commit is one call under the default retry policy, timeouts and backoff included, and
    // when every try went unanswered, one try of the read that settles it.
    longestCommitMs: worstCaseCallMs() + worstCaseCallMs(SETTLING_READ),
    creditPosted,
    openWallet: createWalletOpening(access),
  };
}
