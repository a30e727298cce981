import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { walletKey } from './ledger-keys.ts';
import type { WalletTableAccess } from './ledger-writes.ts';

/** A wallet as stored. */
export interface WalletRecord {
  /** Exact whatever its size: balances are capped at `MAX_BALANCE_MINOR` (./money.ts), but older data may not be. */
  readonly balanceMinor: bigint;
  readonly updatedAt?: string;
}

/** Reading wallets: a module of its own so that send money, which never reads one alone, carries none of it. */
export function createWalletReader({ client, tableName }: WalletTableAccess) {
  /** Reads a wallet with a strongly consistent read; `undefined` for an address with no open wallet. */
  async function readWallet(address: string): Promise<WalletRecord | undefined> {
    const { Item } = await withRetries(() =>
      client.send(
        new GetCommand({ TableName: tableName, Key: { pk: walletKey(address) }, ConsistentRead: true }),
      ),
    );
    return Item
      ? {
          // Exact at any size: the DocumentClient reads an integer beyond 2^53 as a bigint.
          balanceMinor: BigInt(Item.balance as number | bigint),
          updatedAt: Item.updatedAt as string | undefined,
        }
      : undefined;
  }

  return { readWallet };
}

export type WalletReader = ReturnType<typeof createWalletReader>;
