import type { BalanceStore, WalletRecord } from '../balance/ports.ts';
import { readItems } from './consistent-read.ts';
import { inboundKey, walletKey } from './keys.ts';
import { createExactPending } from './pending-balance.ts';
import type { WalletTableAccess } from './table-access.ts';
import { createWalletOpening } from './wallet-opening.ts';

/** Reading a wallet, for the balance and `wallet:fund`: code that moves no money. */
export function createBalanceStore(access: WalletTableAccess): BalanceStore {
  const exactPending = createExactPending(access);

  /**
   * Reads a wallet and its hot marker in one strongly consistent BatchGetItem; `undefined` for an
   * address with no open wallet. A wallet ever marked hot may have credits in transit: then the
   * balance and the pending sum are one moment's (./pending-balance.ts), so that their sum counts
   * each credit paid before the read once, never twice, never not at all.
   */
  async function readWallet(address: string): Promise<WalletRecord | undefined> {
    const found = await readItems(access, [walletKey(address), inboundKey(address)]);
    let wallet = found.get(walletKey(address));
    if (!wallet) return undefined;
    let pendingMinor = 0n;
    if (found.has(inboundKey(address))) {
      const exact = await exactPending.read(address);
      if (exact) ({ wallet, pendingMinor } = exact);
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
