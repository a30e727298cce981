import type { BalanceStore, WalletRecord } from '../balance/ports.ts';
import { readItems } from './consistent-read.ts';
import { inboundKey, walletKey } from './keys.ts';
import { createPendingCredits } from './pending-index.ts';
import type { WalletTableAccess } from './table-access.ts';
import { createWalletOpening } from './wallet-opening.ts';

/** Reading a wallet, for the balance and `wallet:fund`: code that moves no money. */
export function createBalanceStore(access: WalletTableAccess): BalanceStore {
  const pending = createPendingCredits(access);

  /**
   * Reads a wallet and its hot marker in one strongly consistent BatchGetItem; `undefined` for an
   * address with no open wallet. A wallet ever marked hot may have credits in transit: their sum
   * comes from the `pending` index, and the wallet is read again after it, so that a credit posted
   * meanwhile is counted in the balance if it has left the pending sum (never in neither; for a
   * moment it may be in both, and the index itself is eventually consistent).
   */
  async function readWallet(address: string): Promise<WalletRecord | undefined> {
    const found = await readItems(access, [walletKey(address), inboundKey(address)]);
    let wallet = found.get(walletKey(address));
    if (!wallet) return undefined;
    let pendingMinor = 0n;
    if (found.has(inboundKey(address))) {
      pendingMinor = await pending.total(address);
      wallet = (await readItems(access, [walletKey(address)])).get(walletKey(address)) ?? wallet;
    }
    return {
      // Exact at any size: the DocumentClient reads an integer beyond 2^53 as a bigint.
      balanceMinor: BigInt(wallet.balance as number | bigint),
      pendingMinor,
      updatedAt: wallet.updatedAt as string | undefined,
    };
  }

  return { readWallet, openWallet: createWalletOpening(access) };
}
