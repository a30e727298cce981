import { randomUUID } from 'node:crypto';
import { createInboundMarker } from './inbound-marker.ts';
import { createLedgerCommit, sideEntry, stateOf, type WalletTableAccess } from './ledger-commit.ts';
import { addressOfAccount, CLEARING_ACCOUNT, creditKey, walletAccount, walletKey } from './ledger-keys.ts';
import type { CreditInTransit, CreditLedger, PostingPlan, PostingResult } from './post-credits.ts';

/** The credits in transit of the wallet ledger on its DynamoDB table: what the credit poster needs. */
export function createCreditLedger(access: WalletTableAccess): CreditLedger {
  const ledger = createLedgerCommit(access);

  async function read(address: string, transferIds: readonly string[]) {
    const found = await ledger.readMany([walletKey(address), ...transferIds.map(creditKey)]);
    const credits: CreditInTransit[] = [];
    for (const id of transferIds) {
      const item = found.get(creditKey(id));
      if (!item || item.toAccount !== walletAccount(address)) continue;
      credits.push({
        transferId: item.transferId as string,
        fromAccount: item.fromAccount as string,
        fromSeq: item.fromSeq as number,
        amountMinor: item.amountMinor as number,
        currency: item.currency as string,
        createdAt: item.createdAt as string,
        postedSeq: item.postedSeq as number | undefined,
      });
    }
    return { wallet: stateOf(found.get(walletKey(address))), credits };
  }

  async function post({ address, wallet, credits, postedAt }: PostingPlan): Promise<PostingResult> {
    const account = walletAccount(address);
    const items: Record<
      string,
      ReturnType<typeof ledger.put> | ReturnType<typeof ledger.accountUpdate> | ReturnType<typeof creditMark>
    > = {};
    let state = wallet;
    credits.forEach((credit, i) => {
      const entry = {
        ...sideEntry({ ...credit, transferKind: 'transfer' }, { account, state }, 'in', {
          account: CLEARING_ACCOUNT,
          seq: credit.fromSeq,
          address: addressOfAccount(credit.fromAccount),
        }),
        postedAt,
      };
      items[`entry${i}`] = ledger.entryPut(entry);
      items[`credit${i}`] = creditMark(credit.transferId, entry.seq, postedAt);
      state = { exists: true, balance: BigInt(entry.balanceAfter), seq: entry.seq };
    });
    items.wallet = ledger.accountUpdate(
      account,
      wallet,
      state.balance - wallet.balance,
      postedAt,
      credits.length,
    );
    // Never a transfer id: the payer's transaction used it as its token.
    const result = await ledger.commit(items, randomUUID());
    if (result.committed) return { kind: 'posted' };
    return Object.keys(result.refused).some((name) => name.startsWith('credit'))
      ? { kind: 'credit-taken' }
      : { kind: 'wallet-moved' };
  }

  /** Marks a credit posted at the recipient's entry `seq`, and takes it out of the pending index. */
  function creditMark(transferId: string, seq: number, postedAt: string) {
    return {
      Update: {
        TableName: access.tableName,
        Key: { pk: creditKey(transferId) },
        UpdateExpression: 'SET postedSeq = :seq, postedAt = :at REMOVE pendingFor',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(postedSeq)',
        ExpressionAttributeValues: { ':seq': seq, ':at': postedAt },
      },
    };
  }

  return { read, post, markHot: createInboundMarker(access) };
}
