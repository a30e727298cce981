import type { Clock } from './ports.ts';
import type { WalletReader } from './wallet-reader.ts';
import type { WalletRepository } from './wallet-repository.ts';

/** The balance of a wallet in minor units, exact at any size. */
export interface BalanceView {
  readonly address: string;
  readonly balanceMinor: bigint;
  readonly updatedAt?: string | undefined;
}

export interface GetBalanceDependencies {
  readonly wallets: WalletReader & Pick<WalletRepository, 'openWallet'>;
  readonly clock: Clock;
}

/**
 * The balance of the caller's wallet: one strongly consistent read. The owner's first call opens
 * the wallet (one conditional write, once), so that from then on it can receive money; it reads 0.
 */
export function makeGetBalance({ wallets, clock }: GetBalanceDependencies) {
  return async (sub: string): Promise<BalanceView> => {
    const wallet = await wallets.readWallet(sub);
    if (!wallet) await wallets.openWallet(sub, new Date(clock.now()).toISOString());
    return { address: sub, balanceMinor: wallet?.balanceMinor ?? 0n, updatedAt: wallet?.updatedAt };
  };
}
