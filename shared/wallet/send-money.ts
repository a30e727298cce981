import {
  IdempotencyKeyReuseError,
  InsufficientFundsError,
  RecipientLimitError,
  UnknownRecipientError,
} from '../errors.ts';
import { formatMinor, MAX_BALANCE_MINOR } from './money.ts';
import type { Clock, IdSource } from './ports.ts';
import type { WalletSettings } from './settings.ts';
import type { TransferRecord, WalletRepository } from './wallet-repository.ts';

/** A transfer as asked for, already checked and exact: what the HTTP edge makes of a request. */
export interface SendMoneyCommand {
  /** The caller: owner of the wallet that pays. */
  readonly sub: string;
  /** Another address than `sub`. */
  readonly toAddress: string;
  /** In minor units: a positive safe integer, at most the per-transfer maximum. */
  readonly amountMinor: number;
  /** The caller's Idempotency-Key, if it sent one. */
  readonly idempotencyKey?: string | undefined;
}

export interface SendMoneyResult {
  /** The transfer made, or for a replayed key, the one made the first time. */
  readonly transfer: TransferRecord;
  /** Whether the key had been used by the same request: nothing moved this time. */
  readonly replayed: boolean;
}

export interface SendMoneyDependencies {
  readonly wallets: Pick<WalletRepository, 'commitTransfer' | 'openWallet'>;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly settings: WalletSettings;
}

/**
 * Sends money from the caller's wallet to another address.
 * 1. One transaction debits (only if covered), credits, records the transfer and claims the
 *    Idempotency-Key; nothing is read before it.
 * 2. A key already claimed by the same request replays the original transfer; by another
 *    request, it is refused. Either way no money moves a second time.
 * 3. Money goes only to an open wallet (see `makeGetBalance`): to an address with none, the
 *    transfer is refused by a condition of the same transaction, so a typo cannot lose money.
 *    A sender with no wallet has nothing to send; the refusal opens its wallet, once.
 * The answer is the transfer, not the balance: the transaction returns no values, and reading
 * the balance after it would be a second round trip on every send.
 */
export function makeSendMoney({ wallets, clock, ids, settings }: SendMoneyDependencies) {
  const cap = `${formatMinor(MAX_BALANCE_MINOR, settings.currency)}`;
  return async (command: SendMoneyCommand): Promise<SendMoneyResult> => {
    const now = clock.now();
    const createdAt = new Date(now).toISOString();
    const transfer: TransferRecord = {
      transferId: ids.next(),
      fromAddress: command.sub,
      toAddress: command.toAddress,
      amountMinor: command.amountMinor,
      currency: settings.currency.code,
      createdAt,
    };
    const claim = command.idempotencyKey
      ? {
          sub: command.sub,
          key: command.idempotencyKey,
          expiresAt: Math.floor(now / 1000) + settings.idempotencyTtlSeconds,
        }
      : undefined;

    const outcome = await wallets.commitTransfer(transfer, claim);
    switch (outcome.kind) {
      case 'committed':
        return { transfer, replayed: false };
      case 'insufficient-funds':
        if (!outcome.senderHasWallet) await wallets.openWallet(command.sub, createdAt);
        throw new InsufficientFundsError('The balance does not cover this amount; nothing was sent');
      case 'unknown-recipient':
        throw new UnknownRecipientError(
          'No wallet is open at toAddress (a wallet opens when its owner first uses it, or is funded); nothing was sent',
        );
      case 'recipient-limit':
        throw new RecipientLimitError(
          `The recipient's balance would exceed the most a wallet holds (${cap}); nothing was sent`,
        );
      case 'key-used':
        if (!isSameRequest(outcome.transfer, transfer)) {
          throw new IdempotencyKeyReuseError('This Idempotency-Key was used for a different request');
        }
        return { transfer: outcome.transfer, replayed: true };
    }
  };
}

/**
 * Whether a transfer made under a key was asked for by the same request as `attempt`: the key is
 * the caller's own, so the same recipient and amount (in minor units: `2.5` and `2.50` are one).
 */
const isSameRequest = (original: TransferRecord, attempt: TransferRecord): boolean =>
  original.toAddress === attempt.toAddress && original.amountMinor === attempt.amountMinor;
