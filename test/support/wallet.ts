import { randomUUID } from 'node:crypto';
import { recordDeposit } from '#shared/wallet/wallet-repository.ts';

/** Funds a wallet through the same repository code as `npm run wallet:fund`. */
export async function fund(address: string, amountMinor: number): Promise<void> {
  await recordDeposit({
    depositId: randomUUID(),
    address,
    amountMinor,
    currency: 'USD',
    createdAt: new Date().toISOString(),
  });
}
