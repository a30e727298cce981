import { randomUUID } from 'node:crypto';
import {
  IdempotencyKeyReuseError,
  InsufficientFundsError,
  InvalidParameterError,
  RecipientLimitError,
  UnknownRecipientError,
  ValidationError,
} from '../errors.ts';
import { addMetric, setOutcome } from '../observability/telemetry.ts';
import { isoTimestamp } from '../time.ts';
import {
  type AmountProblem,
  MAX_AMOUNT_TEXT_LENGTH,
  MAX_BALANCE_MINOR,
  moneyJson,
  numberSource,
  parseAmount,
} from './money.ts';
import type { WalletSettings } from './settings.ts';
import { commitTransfer, openWallet, readWallet, type TransferRecord } from './wallet-repository.ts';

/**
 * The balance of the caller's wallet: one strongly consistent read. The owner's first call opens
 * the wallet (one conditional write, once), so that from then on it can receive money; it reads 0.
 */
export async function getBalance(address: string, settings: WalletSettings) {
  const wallet = await readWallet(address);
  if (!wallet) await openWallet(address, isoTimestamp(Date.now()));
  return {
    address,
    balance: moneyJson(wallet?.balanceMinor ?? 0, settings.currency),
    currency: settings.currency.code,
    ...(wallet?.updatedAt ? { updatedAt: wallet.updatedAt } : {}),
  };
}

export interface SendMoneyCommand {
  /** The caller: owner of the wallet that pays. */
  readonly sub: string;
  readonly toAddress: string;
  /** The request body as sent: the amount's precision is judged on its JSON text. */
  readonly rawBody: string;
  /** The Idempotency-Key header as sent, if any. */
  readonly idempotencyKeyHeader?: string | undefined;
}

const AMOUNT_DETAILS: Record<AmountProblem, (s: WalletSettings) => string> = {
  'not-a-number': () => 'must be a JSON number',
  'not-positive': () => 'must be greater than 0',
  'too-precise': (s) => `must have at most ${s.currency.decimals} decimals (${s.currency.code})`,
  'too-large': (s) =>
    `must be at most ${JSON.stringify(moneyJson(s.maxTransferMinor, s.currency))} per transfer`,
  'too-long': () => `must be written in at most ${MAX_AMOUNT_TEXT_LENGTH} characters`,
};

/**
 * Sends money from the caller's wallet to another address.
 * 1. The amount is read exactly from the JSON text; a sender cannot pay itself.
 * 2. One transaction debits (only if covered), credits, records the transfer and claims the
 *    Idempotency-Key; nothing is read before it.
 * 3. A key already claimed by the same request replays the original transfer; by another
 *    request, it is refused. Either way no money moves a second time.
 * 4. Money goes only to an open wallet (see {@link getBalance}): to an address with none, the
 *    transfer is refused by a condition of the same transaction, so a typo cannot lose money.
 *    A sender with no wallet has nothing to send; the refusal opens its wallet, once.
 * The answer is the transfer, not the balance: the transaction returns no values, and reading
 * the balance after it would be a second round trip on every send (`GET /api/wallet/balance`
 * reads it).
 */
export async function sendMoney(command: SendMoneyCommand, settings: WalletSettings) {
  const amountMinor = amountOf(command.rawBody, settings);
  if (command.toAddress === command.sub) {
    throw new ValidationError([{ pointer: '/toAddress', detail: 'must not be your own address' }]);
  }
  const key = parseIdempotencyKey(command.idempotencyKeyHeader);
  const now = Date.now();
  const createdAt = isoTimestamp(now);
  const transfer: TransferRecord = {
    transferId: randomUUID(),
    fromAddress: command.sub,
    toAddress: command.toAddress,
    amountMinor,
    currency: settings.currency.code,
    createdAt,
  };
  const claim = key
    ? { sub: command.sub, key, expiresAt: Math.floor(now / 1000) + settings.idempotencyTtlSeconds }
    : undefined;

  const outcome = await commitTransfer(transfer, claim);
  if (outcome.kind === 'insufficient-funds') {
    if (!outcome.senderHasWallet) await openWallet(command.sub, createdAt);
    throw new InsufficientFundsError('The balance does not cover this amount; nothing was sent');
  }
  if (outcome.kind === 'unknown-recipient') {
    throw new UnknownRecipientError(
      'No wallet is open at toAddress (a wallet opens when its owner first uses it, or is funded); nothing was sent',
    );
  }
  if (outcome.kind === 'recipient-limit') {
    throw new RecipientLimitError(
      `The recipient's balance would exceed the most a wallet holds (${JSON.stringify(moneyJson(MAX_BALANCE_MINOR, settings.currency))}); nothing was sent`,
    );
  }
  if (outcome.kind === 'key-used' && !isSameRequest(outcome.transfer, transfer)) {
    throw new IdempotencyKeyReuseError('This Idempotency-Key was used for a different request');
  }
  if (outcome.kind === 'key-used') {
    setOutcome('idempotent-replay');
    addMetric('IdempotentReplays', 1);
  } else {
    addMetric('Transfers', 1);
    addMetric('TransferVolumeMinor', amountMinor, 'None');
  }
  const done = outcome.kind === 'key-used' ? outcome.transfer : transfer;
  return {
    replayed: outcome.kind === 'key-used',
    transfer: {
      transferId: done.transferId,
      fromAddress: done.fromAddress,
      toAddress: done.toAddress,
      amount: moneyJson(done.amountMinor, settings.currency),
      currency: done.currency,
      status: 'completed' as const,
      createdAt: done.createdAt,
    },
  };
}

/**
 * Whether a transfer made under a key was asked for by the same request as `attempt`: the key is
 * the caller's own, so the same recipient and amount (in minor units: `2.5` and `2.50` are one).
 */
const isSameRequest = (original: TransferRecord, attempt: TransferRecord): boolean =>
  original.toAddress === attempt.toAddress && original.amountMinor === attempt.amountMinor;

function amountOf(rawBody: string, settings: WalletSettings): number {
  const parsed = parseAmount(
    numberSource(rawBody, 'amount') ?? '',
    settings.currency,
    settings.maxTransferMinor,
  );
  if ('problem' in parsed) {
    throw new ValidationError([{ pointer: '/amount', detail: AMOUNT_DETAILS[parsed.problem](settings) }]);
  }
  return parsed.minor;
}

/**
 * The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header): a structured-field
 * string, so quotes are accepted and removed; 1–255 visible ASCII characters.
 */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  const key = /^".*"$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
  if (!/^[\x21-\x7E]{1,255}$/.test(key)) {
    throw new InvalidParameterError('Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return key;
}
