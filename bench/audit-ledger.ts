import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { depositKey, entryKey, transferKey } from '#shared/wallet/dynamodb/keys.ts';
import { ISSUANCE_ACCOUNT } from '#shared/wallet/model/accounts.ts';
import type { EntryRecord } from '#shared/wallet/model/entry.ts';

/*
 * A consistent wallet ledger of any size, written straight to a table as the functions would have
 * left it (same keys and attributes), for measuring the audit: writing it through the functions'
 * transactions would take minutes per ten thousand wallets.
 */

type Item = Record<string, unknown>;

/**
 * The items of `wallets` wallets of about `movements` movements each: a deposit each, then
 * transfers between random pairs until every wallet has about that many entries.
 */
export function* ledgerItems(wallets: number, movements: number, createdAt: string): Generator<Item> {
  const accounts = new Map<string, { balance: number; seq: number }>();
  const walletAccounts = Array.from({ length: wallets }, () => `W#user-${randomUUID()}`);
  for (const account of [ISSUANCE_ACCOUNT, ...walletAccounts]) accounts.set(account, { balance: 0, seq: 0 });

  function* move(from: string, to: string, amountMinor: number, transferKind: 'transfer' | 'deposit') {
    const [payer, payee] = [accounts.get(from), accounts.get(to)] as [
      { balance: number; seq: number },
      { balance: number; seq: number },
    ];
    payer.balance -= amountMinor;
    payee.balance += amountMinor;
    payer.seq++;
    payee.seq++;
    const transferId = randomUUID();
    const side = (account: string, direction: 'in' | 'out'): EntryRecord => {
      const [self, other, otherAccount] =
        direction === 'out' ? [payer, payee, to] : ([payee, payer, from] as const);
      return {
        account,
        seq: self.seq,
        transferId,
        transferKind,
        direction,
        amountMinor,
        balanceAfter: self.balance,
        counterpartyAccount: otherAccount,
        counterpartySeq: other.seq,
        currency: 'USD',
        createdAt,
      };
    };
    for (const entry of [side(from, 'out'), side(to, 'in')]) {
      yield { pk: entryKey(entry.account, entry.seq), kind: 'entry', ...entry };
    }
    const address = (account: string) => account.slice(2);
    const depositId = randomUUID();
    // A deposit's claim on its id, as the deposit store writes it in the same transaction.
    if (transferKind === 'deposit') {
      yield {
        pk: depositKey(depositId),
        kind: 'deposit',
        depositId,
        address: address(to),
        amountMinor,
        currency: 'USD',
        createdAt,
        transferId,
        attempt: randomUUID(),
      };
    }
    yield {
      pk: transferKey(transferId),
      kind: 'transfer',
      transferKind,
      transferId,
      ...(transferKind === 'transfer' ? { fromAddress: address(from) } : { depositId }),
      toAddress: address(to),
      amountMinor,
      currency: 'USD',
      createdAt,
      fromSeq: payer.seq,
      toSeq: payee.seq,
    };
  }

  for (const account of walletAccounts) yield* move(ISSUANCE_ACCOUNT, account, 1_000_000, 'deposit');
  const transfers = Math.round((wallets * (movements - 1)) / 2);
  for (let i = 0; i < transfers; i++) {
    const from = walletAccounts[Math.floor(Math.random() * wallets)] as string;
    let to = from;
    while (to === from && wallets > 1) to = walletAccounts[Math.floor(Math.random() * wallets)] as string;
    yield* move(from, to, 1 + Math.floor(Math.random() * 1_000), 'transfer');
  }
  for (const [account, { balance, seq }] of accounts) {
    yield account === ISSUANCE_ACCOUNT
      ? { pk: 'ACCOUNT#ISSUANCE', kind: 'issuance', balance, seq, updatedAt: createdAt }
      : {
          pk: `WALLET#${account.slice(2)}`,
          kind: 'wallet',
          balance,
          seq,
          updatedAt: createdAt,
          openedAt: createdAt,
        };
  }
}

/**
 * A write that timed out, tried again (at most 5 times): puts are idempotent, and DynamoDB Local on
 * a loaded 2-core machine can take longer than the client's 2 s for a batch.
 */
async function again<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if ((error as Error).name !== 'TimeoutError' || attempt === 5) throw error;
    }
  }
}

/** Writes `items` to `tableName` in BatchWriteItems of 25, 16 at a time; the number written. */
export async function writeItems(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: Iterable<Item>,
): Promise<number> {
  const iterator = items[Symbol.iterator]();
  let written = 0;
  const writer = async () => {
    for (;;) {
      const batch: Item[] = [];
      for (let next = iterator.next(); !next.done; next = iterator.next()) {
        batch.push(next.value);
        if (batch.length === 25) break;
      }
      if (batch.length === 0) return;
      let pending = batch.map((Item) => ({ PutRequest: { Item } }));
      while (pending.length > 0) {
        const { UnprocessedItems } = await again(() =>
          client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } })),
        );
        pending = (UnprocessedItems?.[tableName] as typeof pending | undefined) ?? [];
      }
      written += batch.length;
    }
  };
  await Promise.all(Array.from({ length: 16 }, writer));
  return written;
}
