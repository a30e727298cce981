import { readItems } from './consistent-read.ts';
import type { WalletTableAccess } from './ledger-commit.ts';
import { inboundKey, walletKey } from './ledger-keys.ts';
import { createPendingCredits } from './pending-credits.ts';

/** A wallet as stored. */
export interface WalletRecord {
  /** What can be spent: posted money only. Exact whatever its size. */
  readonly balanceMinor: bigint;
  /** Credits paid to it and still in transit through the clearing account. */
  readonly pendingMinor: bigint;
  readonly updatedAt?: string;
}

/** Reading a wallet, for the balance and `wallet:fund`: code that moves no money. */
export function createWalletReader(access: WalletTableAccess) {
  const pending = createPendingCredits(access);

  /**
   * Reads a wallet and its hot marker in one strongly consistent BatchGetItem; `undefined` for an
   * address with no open wallet. A wallet ever marked hot may have credits in transit: their sum
   * comes from the `pending` index (eventually consistent, as every index).
   */
  async function readWallet(address: string): Promise<WalletRecord | undefined> {
    const found = await readItems(access, [walletKey(address), inboundKey(address)]);
    const wallet = found.get(walletKey(address));
    if (!wallet) return undefined;
    return {
      // Exact at any size: the DocumentClient reads an integer beyond 2^53 as a bigint.
      balanceMinor: BigInt(wallet.balance as number | bigint),
      pendingMinor: found.has(inboundKey(address)) ? await pending.total(address) : 0n,
      updatedAt: wallet.updatedAt as string | undefined,
    };
  }

  return { readWallet };
}

export type WalletReader = ReturnType<typeof createWalletReader>;
