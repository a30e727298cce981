import { LookalikeAddressError } from '../../errors.ts';
import type { Clock } from '../model/ports.ts';
import type { BalanceStore } from './ports.ts';

/** The balance of a wallet in minor units, exact at any size. */
export interface BalanceView {
  readonly address: string;
  /** Posted money: what the owner can spend. */
  readonly balanceMinor: bigint;
  /** Paid to the wallet and not yet posted (a hot wallet's credits in transit). */
  readonly pendingMinor: bigint;
  readonly updatedAt?: string | undefined;
}

export interface GetBalanceDependencies {
  readonly wallets: BalanceStore;
  readonly clock: Clock;
}

/**
 * The balance of the caller's wallet: one strongly consistent read (and the sum of its credits
 * in transit, for a wallet that was ever hot). The owner's first call opens the wallet (one
 * conditional write, once), so that from then on it can receive money; it reads 0. An address that
 * looks like another wallet's (their UTS #39 skeletons are equal) gets no wallet: a refusal.
 */
export function makeGetBalance({ wallets, clock }: GetBalanceDependencies) {
  return async (sub: string): Promise<BalanceView> => {
    const wallet = await wallets.readWallet(sub);
    if (!wallet && (await wallets.openWallet(sub, new Date(clock.now()).toISOString())) === 'lookalike') {
      throw new LookalikeAddressError(
        "This address looks like another wallet's address: no wallet can be opened at it",
      );
    }
    return {
      address: sub,
      balanceMinor: wallet?.balanceMinor ?? 0n,
      pendingMinor: wallet?.pendingMinor ?? 0n,
      updatedAt: wallet?.updatedAt,
    };
  };
}
