import { randomUUID } from 'node:crypto';
import { openWallet, recordDeposit } from '#shared/wallet/wallet-repository.ts';

/** Funds a wallet through the same repository code as `npm run wallet:fund` (which opens it). */
export async function fund(address: string, amountMinor: number): Promise<void> {
  const outcome = await recordDeposit({
    depositId: randomUUID(),
    address,
    amountMinor,
    currency: 'USD',
    createdAt: new Date().toISOString(),
  });
  if (outcome.kind !== 'recorded') throw new Error(`Funding ${address} was refused: ${outcome.kind}`);
}

/** Opens an empty wallet, as its owner's first call does, so that it can receive money. */
export const open = (address: string): Promise<void> => openWallet(address, new Date().toISOString());
