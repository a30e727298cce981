import { randomUUID } from 'node:crypto';
import { createInboundMarker } from './inbound-marker.ts';
import { createLedgerCommit, sideEntry, stateOf, type WalletTableAccess } from './ledger-commit.ts';
import { addressOfAccount, CLEARING_ACCOUNT, creditKey, walletAccount, walletKey } from './ledger-keys.ts';
import type { CreditInTransit, CreditLedger, PostingPlan, PostingResult } from './post-credits.ts';

/**
 * A credit in transit as its item holds it (read from the table, or from the stream's image of its
 * insert), with its recipient's address; `undefined` for an item without its transfer, accounts,
 * amount or time.
 */
export function creditOfItem(
  item: Record<string, unknown>,
): { address: string; credit: CreditInTransit } | undefined {
  const address = addressOfAccount(String(item.toAccount ?? ''));
  const { transferId, fromAccount, fromSeq, amountMinor, currency, createdAt, postedSeq } = item;
  const texts = [transferId, fromAccount, currency, createdAt];
  if (address === undefined || !texts.every((value) => typeof value === 'string' && value !== '')) return;
  if (!Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(amountMinor)) return;
  return {
    address,
    credit: {
      transferId,
      fromAccount,
      fromSeq,
      amountMinor,
      currency,
      createdAt,
      postedSeq: postedSeq as number | undefined,
    } as CreditInTransit,
  };
}

/** The credits in transit of the wallet ledger on its DynamoDB table: what the credit poster needs. */
export function createCreditLedger(access: WalletTableAccess): CreditLedger {
  const ledger = createLedgerCommit(access);

  async function read(address: string, transferIds: readonly string[]) {
    const found = await ledger.readMany([walletKey(address), ...transferIds.map(creditKey)]);
    const credits: CreditInTransit[] = [];
    for (const id of transferIds) {
      const item = found.get(creditKey(id));
      const read = item && creditOfItem(item);
      if (read?.address === address) credits.push(read.credit);
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
      items[`entry${i}`] = ledger.entryPut(entry, true);
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
