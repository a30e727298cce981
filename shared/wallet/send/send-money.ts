import {
  IdempotencyKeyReuseError,
  InsufficientFundsError,
  RecipientLimitError,
  UnknownRecipientError,
} from '../../errors.ts';
import { ANSWER_MARGIN_MS } from '../../request-deadline.ts';
import type { HotWalletRouter } from '../hot-wallet/router.ts';
import { formatMinor, MAX_BALANCE_MINOR } from '../model/money.ts';
import { busy, retryMovement } from '../model/movement-retry.ts';
import type { Clock, IdSource } from '../model/ports.ts';
import type { WalletSettings } from '../model/settings.ts';
import type { TransferRecord, TransferStatus } from '../model/transfer.ts';
import type { IdempotencyClaim, TransferState, TransferStore } from './ports.ts';

export interface SendMoneyCommand {
  /** The caller: owner of the wallet that pays. */
  readonly sub: string;
  /** Another address than `sub`. */
  readonly toAddress: string;
  /** In minor units: a positive safe integer, at most the per-transfer maximum. */
  readonly amountMinor: number;
  /** The caller's Idempotency-Key, if it sent one. */
  readonly idempotencyKey?: string | undefined;
  /** Epoch ms by which the answer must be given (the function's timeout). */
  readonly answerBy: number;
  readonly reference?: string | undefined;
  /** Absent rather than empty: `{}` and no metadata are one request. */
  readonly metadata?: Readonly<Record<string, string>> | undefined;
}

export interface SendMoneyResult {
  /** The transfer made, or for a replayed key, the one made the first time. */
  readonly transfer: TransferRecord;
  readonly status: TransferStatus;
  /** Whether the key had been used by the same request: nothing moved this time. */
  readonly replayed: boolean;
}

export interface SendMoneyDependencies {
  readonly transfers: TransferStore;
  /** Whether each credit goes straight to the recipient or through the clearing account. */
  readonly router: HotWalletRouter;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly settings: WalletSettings;
}

/**
 * Sends money from the caller's wallet to another address.
 * 1. One read of both wallets, the recipient's hot marker and the key's claim; beside it, the
 *    router's claim of the recipient's direct credit (a recipient the router knows hot is neither
 *    read nor claimed: ../hot-wallet/router.ts).
 * 2. A key already claimed by the same request replays the original transfer; by another
 *    request, it is refused. Either way no money moves a second time.
 * 3. The payer must cover the amount (a caller who cannot pay learns nothing about the
 *    recipient; a refusal opens the payer's wallet, once); money goes only to an open wallet, so
 *    a typo cannot lose money; no wallet is credited past the most it holds.
 * 4. One transaction writes the payer's side and the credit, where the router says: straight to
 *    the recipient, or into the clearing account, from where the credit poster posts it in a batch.
 *    A recipient found in another transaction sends the payment through the clearing account at
 *    once, so no payment waits for other payments to the same wallet.
 * The answer is the transfer, not the balance: reading the balance after it would be a second
 * round trip on every send.
 */
export function makeSendMoney({ transfers, router, clock, ids, settings }: SendMoneyDependencies) {
  const cap = formatMinor(MAX_BALANCE_MINOR, settings.currency);
  const answers = answersToKeys(transfers);
  return async (command: SendMoneyCommand): Promise<SendMoneyResult> => {
    const now = clock.now();
    const transfer = transferOf(command, ids.next(), now, settings);
    const claim = claimOf(command, now, settings);
    const amount = BigInt(transfer.amountMinor);
    const routing = router.begin(command.toAddress, transfer.transferId, now);
    /** What was read, while it still holds. */
    let known: TransferState | undefined;
    let committed = false;
    const deadline = command.answerBy - transfers.longestCommitMs - ANSWER_MARGIN_MS;
    try {
      // The payer's own other payments may keep it busy: it goes on trying while a transaction
      // started now still ends in time to answer, and only then answers 503.
      return await retryMovement<SendMoneyResult>(
        { at: deadline, message: 'The wallets are busy; retry the request' },
        async (attempt, beforeWrite) => {
          const state = known ?? (await transfers.read(transfer, claim, routing.known));
          known = undefined;
          if (state.claimed && state.claimed.expiresAt >= Math.floor(now / 1000)) {
            return { done: await answers.replay(state.claimed.transfer, transfer, deadline) };
          }
          if (!state.payer.exists || state.payer.balance < amount) {
            if (!state.payer.exists) await transfers.openWallet(command.sub, transfer.createdAt);
            throw new InsufficientFundsError('The balance does not cover this amount; nothing was sent');
          }
          if (!state.recipient.exists) {
            throw new UnknownRecipientError(
              'No wallet is open at toAddress (a wallet opens when its owner first uses it, or is funded); nothing was sent',
            );
          }
          // For a recipient known hot, on its balance as last read: like its credits in transit,
          // what was posted since may take it past the cap (docs/decisions/hot-wallets.md).
          if (state.recipient.balance + amount > BigInt(MAX_BALANCE_MINOR)) {
            throw new RecipientLimitError(
              `The recipient's balance would exceed the most a wallet holds (${cap}); nothing was sent`,
            );
          }
          const route = await routing.routeOn(state);
          const sent: TransferRecord = route === 'clearing' ? { ...transfer, via: 'clearing' } : transfer;
          beforeWrite();
          const result = await transfers.commit({
            transfer: sent,
            claim,
            payer: state.payer,
            route:
              route === 'clearing' ? { kind: 'clearing' } : { kind: 'direct', recipient: state.recipient },
            attempt,
          });
          switch (result.kind) {
            case 'committed':
              committed = true;
              return {
                done: {
                  transfer: sent,
                  status: route === 'clearing' ? 'pending' : 'completed',
                  replayed: false,
                },
              };
            case 'key-claimed':
              return { done: await answers.replay(result.transfer, transfer, deadline) };
            case 'recipient-busy':
              // Through the clearing account at once, on the same read unless the payer moved too.
              if (!result.payerMoved) known = state;
              routing.contended(state);
              return { again: 'now' };
            case 'payer-moved':
              return { again: result.inFlight ? 'after-pause' : 'now' };
          }
        },
      );
    } finally {
      await routing.settle(committed, deadline);
    }
  };
}

function transferOf(command: SendMoneyCommand, transferId: string, now: number, settings: WalletSettings) {
  return {
    transferId,
    fromAddress: command.sub,
    toAddress: command.toAddress,
    amountMinor: command.amountMinor,
    currency: settings.currency.code,
    createdAt: new Date(now).toISOString(),
    ...(command.reference === undefined ? {} : { reference: command.reference }),
    ...(command.metadata === undefined ? {} : { metadata: command.metadata }),
  } satisfies TransferRecord;
}

function claimOf(
  command: SendMoneyCommand,
  now: number,
  settings: WalletSettings,
): IdempotencyClaim | undefined {
  if (!command.idempotencyKey) return undefined;
  return {
    sub: command.sub,
    key: command.idempotencyKey,
    expiresAt: Math.floor(now / 1000) + settings.idempotencyTtlSeconds,
  };
}

/** How a key used before is answered. */
function answersToKeys(transfers: Pick<TransferStore, 'creditPosted'>) {
  /** The answer to a key used before: the original transfer if the request is the same, else a refusal. */
  async function replay(
    original: TransferRecord,
    attempt: TransferRecord,
    deadline: number,
  ): Promise<SendMoneyResult> {
    if (original.transferId === attempt.transferId) {
      // Our own earlier attempt committed (its answer was lost): this is our transfer.
      return { transfer: original, status: await statusOf(original, deadline), replayed: false };
    }
    if (!isSameRequest(original, attempt)) {
      throw new IdempotencyKeyReuseError('This Idempotency-Key was used for a different request');
    }
    return { transfer: original, status: await statusOf(original, deadline), replayed: true };
  }

  /**
   * The status a transfer has now: a read of its credit (and of its batch, while a posting has
   * taken it and not completed it), for a transfer through the clearing account. Past the deadline
   * those reads could outlast the request: busy instead, which the client retries with its key (a
   * key is what led here) and is answered in full.
   */
  async function statusOf(transfer: TransferRecord, deadline: number): Promise<TransferStatus> {
    if (transfer.via !== 'clearing') return 'completed';
    if (Date.now() > deadline)
      throw busy('The transfer was made; retry the request with its key for its status');
    return (await transfers.creditPosted(transfer.transferId)) ? 'completed' : 'pending';
  }

  return { replay };
}

/**
 * Whether a transfer made under a key was asked for by the same request as `attempt`: the key is
 * the caller's own, so the same recipient and amount (in minor units: `2.5` and `2.50` are one),
 * reference and metadata (the same pairs in any order).
 */
const isSameRequest = (original: TransferRecord, attempt: TransferRecord): boolean =>
  original.toAddress === attempt.toAddress &&
  original.amountMinor === attempt.amountMinor &&
  original.reference === attempt.reference &&
  sameMetadata(original.metadata, attempt.metadata);

function sameMetadata(a: TransferRecord['metadata'], b: TransferRecord['metadata']): boolean {
  const keys = Object.keys(a ?? {});
  return (
    keys.length === Object.keys(b ?? {}).length &&
    keys.every((key) => Object.hasOwn(b ?? {}, key) && b?.[key] === a?.[key])
  );
}
