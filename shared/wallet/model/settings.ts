import { requireEnv, requireIntegerEnv } from '../../config.ts';
import { type Currency, MAX_BALANCE_MINOR } from './money.ts';

/** The money settings of a deployment, read once at cold start. */
export interface WalletSettings {
  readonly currency: Currency;
  readonly maxTransferMinor: number;
  readonly idempotencyTtlSeconds: number;
}

/** Reads the wallet settings from the environment; throws when one is missing or malformed. */
export function loadWalletSettings(): WalletSettings {
  const decimals = requireIntegerEnv('CURRENCY_DECIMALS');
  if (decimals > 4) throw new Error('CURRENCY_DECIMALS must be at most 4');
  const maxTransferMinor = requireIntegerEnv('MAX_TRANSFER_MINOR');
  if (maxTransferMinor > MAX_BALANCE_MINOR) {
    throw new Error(`MAX_TRANSFER_MINOR must be at most ${MAX_BALANCE_MINOR}, the most a wallet holds`);
  }
  return {
    currency: { code: requireEnv('CURRENCY'), decimals },
    maxTransferMinor,
    idempotencyTtlSeconds: idempotencyTtlFromEnv(),
  };
}

/** How long an Idempotency-Key is kept (`wallet:idempotencyTtlSeconds`): a day at the least. */
export function idempotencyTtlFromEnv(): number {
  return Math.max(86_400, requireIntegerEnv('IDEMPOTENCY_TTL_SECONDS'));
}
