import {
  IdempotencyKeyReuseError,
  InsufficientFundsError,
  RecipientLimitError,
  UnknownRecipientError,
} from '../../errors.ts';
import { ANSWER_MARGIN_MS } from '../../request-deadline.ts';
import { recentEntries } from '../../util/recent-entries.ts';
import type { AccountState } from '../dynamodb/ledger-commit.ts';
import { formatMinor, MAX_BALANCE_MINOR } from '../model/money.ts';
import { busy, retryMovement } from '../model/movement-retry.ts';
import type { Clock, IdSource } from '../model/ports.ts';
import type { WalletSettings } from '../model/settings.ts';

/** A transfer as asked for and as answered: immutable once written. */
export interface TransferRecord {
  readonly transferId: string;
  readonly fromAddress: string;
  readonly toAddress: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  /** Set when the credit went through the clearing account: the recipient is credited when it is posted. */
  readonly via?: 'clearing';
  /** What the recipient matches the payment on (its order id), and free key-value pairs: as sent. */
  readonly reference?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** An Idempotency-Key claimed by the transaction that uses it. */
export interface IdempotencyClaim {
  readonly sub: string;
  readonly key: string;
  /** Epoch seconds after which DynamoDB TTL may delete the record and the key is free again. */
  readonly expiresAt: number;
}

/** What a transfer depends on, read together before it is written. */
export interface TransferState {
  readonly payer: AccountState;
  readonly recipient: AccountState;
  /** Epoch ms until which the recipient is hot (0: never marked): credit it through the clearing account. */
  readonly recipientHotUntil: number;
  /** The last direct-credit claim settled on the recipient's wallet (its payment credited it). */
  readonly recipientDirectClaim?: string | undefined;
  /** The key's claim, when the key was used before. */
  readonly claimed?: { readonly transfer: TransferRecord; readonly expiresAt: number };
}

/**
 * The recipient as a container remembers it while it knows the recipient is hot: its wallet as
 * last read and until when its mark holds. Given to `read`, it is not read again.
 */
export type HotRecipient = Pick<TransferState, 'recipient' | 'recipientHotUntil'>;

/** One write of a transfer: its payer's side, and where the credit goes. */
export interface TransferPlan {
  readonly transfer: TransferRecord;
  readonly claim?: IdempotencyClaim | undefined;
  readonly payer: AccountState;
  readonly route:
    | { readonly kind: 'direct'; readonly recipient: AccountState }
    | { readonly kind: 'clearing' };
  /** 1 for the first write of this request, then 2, 3, … for each new version after a refusal. */
  readonly attempt: number;
}

export type TransferCommit =
  | { readonly kind: 'committed' }
  /** The key was claimed meanwhile: the transfer it made. */
  | { readonly kind: 'key-claimed'; readonly transfer: TransferRecord }
  /** The payer's account changed since it was read (another of its movements): read again. */
  | {
      readonly kind: 'payer-moved';
      /** Another transaction on the payer's items is still in flight (else it has committed: read again at once). */
      readonly inFlight: boolean;
    }
  /**
   * The recipient's account changed or is in another transaction: it is contended. When the
   * payer's items were not refused too, what was read of the payer still holds.
   */
  | { readonly kind: 'recipient-busy'; readonly payerMoved: boolean };

/** What claiming a recipient's direct credit answers: the claim it replaced, if any. */
export interface DirectCreditClaim {
  readonly previous?: { readonly claimId: string; readonly claimedAt: number };
}

/** The ledger as sending money needs it: declared here, implemented by ./transfer-ledger.ts. */
export interface TransferLedger {
  /**
   * One read of what the transfer depends on: the payer's wallet, the key's claim and, unless it
   * is given as `known`, the recipient's wallet and hot marker.
   */
  read(transfer: TransferRecord, claim?: IdempotencyClaim, known?: HotRecipient): Promise<TransferState>;
  /**
   * Claims the direct credit of `address` for the payment `claimId` at `now` (epoch ms), beside the
   * read. Never throws: `undefined` when the claim could not be written.
   */
  claimDirectCredit(address: string, claimId: string, now: number): Promise<DirectCreditClaim | undefined>;
  /**
   * Withdraws the claim `claimId` of a payment that wrote nothing (refused, replayed, busy), unless
   * a later claim replaced it: the claim before it is restored, or with none it is left stale, so
   * that the next payment need not wait for it. Never throws.
   */
  releaseDirectCredit(address: string, claimId: string, before: DirectCreditClaim): Promise<void>;
  /**
   * Writes the plan in one transaction, applied at most once however often it is retried: the
   * transfer record is written on condition that its id is new.
   */
  commit(plan: TransferPlan): Promise<TransferCommit>;
  /** The longest a commit can take before it answers or fails (every retry included). */
  readonly longestCommitMs: number;
  /**
   * Routes payments to `address` through the clearing account until `until` (epoch ms), and makes
   * reads of its balance count its credits in transit; answers until when the mark is known to
   * hold. Never throws: a mark that could not be written answers 0.
   */
  markHot(address: string, until: number): Promise<number>;
  creditPosted(transferId: string): Promise<boolean>;
  openWallet(address: string, openedAt: string): Promise<void>;
}

/** A sent transfer's status: `pending` while its credit is in transit to a hot wallet. */
export type TransferStatus = 'pending' | 'completed';

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
  readonly ledger: TransferLedger;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly settings: WalletSettings;
}

/** How long a wallet stays hot after a payment to it met another: long enough to outlast a burst. */
export const HOT_FOR_MS = 10_000;

/**
 * How long a claim holds the recipient's wallet while its payment is not seen settled on it: past
 * a commit's usual time, so that a claim whose payment went through the clearing account, or died
 * before it could withdraw its claim, does not keep the wallet from direct credits for long.
 */
export const DIRECT_CLAIM_HOLDS_MS = 2_000;

/** How many recipients a container remembers as hot: enough for its busiest, bounded in memory. */
const HOT_RECIPIENTS_REMEMBERED = 1_000;

/**
 * Whether a payment may write the recipient's wallet itself: only if the claim before its own is
 * settled there (or stale, or there was none), so that of the payments arriving at a wallet
 * together only the first tries it, and the others never name it in a transaction that would fail.
 */
export function mayCreditDirectly(claim: DirectCreditClaim | undefined, state: TransferState, now: number) {
  if (!claim) return false;
  const { previous } = claim;
  return (
    previous === undefined ||
    previous.claimId === state.recipientDirectClaim ||
    previous.claimedAt < now - DIRECT_CLAIM_HOLDS_MS
  );
}

/**
 * Sends money from the caller's wallet to another address.
 * 1. One read of both wallets, the recipient's hot marker and the key's claim; beside it, the
 *    payment's claim of the recipient's direct credit. A recipient this container knows is hot is
 *    neither read nor claimed: wallets never close, and at thousands of payments a second every
 *    payer reading its item would take more than an item's read throughput.
 * 2. A key already claimed by the same request replays the original transfer; by another
 *    request, it is refused. Either way no money moves a second time.
 * 3. The payer must cover the amount (a caller who cannot pay learns nothing about the
 *    recipient; a refusal opens the payer's wallet, once); money goes only to an open wallet, so
 *    a typo cannot lose money; no wallet is credited past the most it holds.
 * 4. One transaction writes the payer's side and the credit: straight to the recipient when its
 *    claim allows it (`mayCreditDirectly`), or else into the clearing account, from where the
 *    credit poster posts it in a batch. A recipient found contended (another claim in flight, or
 *    its wallet in another transaction) is marked hot and the payment goes through the clearing
 *    account at once, so no payment waits for other payments to the same wallet.
 * The answer is the transfer, not the balance: reading the balance after it would be a second
 * round trip on every send.
 */
export function makeSendMoney({ ledger, clock, ids, settings }: SendMoneyDependencies) {
  const cap = formatMinor(MAX_BALANCE_MINOR, settings.currency);
  /**
   * Recipients this container saw hot: while their mark holds, their payments make no claim and
   * read neither their wallet nor their marker (`HotRecipient`).
   */
  const hotSeen = recentEntries<HotRecipient>(HOT_RECIPIENTS_REMEMBERED);
  return async (command: SendMoneyCommand): Promise<SendMoneyResult> => {
    const now = clock.now();
    const transfer: TransferRecord = {
      transferId: ids.next(),
      fromAddress: command.sub,
      toAddress: command.toAddress,
      amountMinor: command.amountMinor,
      currency: settings.currency.code,
      createdAt: new Date(now).toISOString(),
      ...(command.reference === undefined ? {} : { reference: command.reference }),
      ...(command.metadata === undefined ? {} : { metadata: command.metadata }),
    };
    const claim = command.idempotencyKey
      ? {
          sub: command.sub,
          key: command.idempotencyKey,
          expiresAt: Math.floor(now / 1000) + settings.idempotencyTtlSeconds,
        }
      : undefined;
    const amount = BigInt(transfer.amountMinor);
    const seen = hotSeen.get(command.toAddress);
    const knownHot = seen && seen.recipientHotUntil > now ? seen : undefined;
    const claiming = knownHot
      ? Promise.resolve(undefined)
      : ledger.claimDirectCredit(command.toAddress, transfer.transferId, now);
    /** Whether this payment may credit the recipient directly: decided on its first read. */
    let direct: boolean | undefined;
    /** What was read, while it still holds. */
    let known: TransferState | undefined;
    let marking: Promise<number> | undefined;
    let committed = false;
    // Only the recipient's part of what was read: the rest (payer, key) is this request's alone.
    const rememberHot = (state: TransferState, until: number) =>
      hotSeen.set(command.toAddress, { recipient: state.recipient, recipientHotUntil: until });
    /**
     * Marks the recipient hot, once per request; answers until when the mark holds (0: not
     * written). Remembered only once written: a payment that trusted a mark never written would put
     * its credit in transit where the balance read does not look (it looks once marked).
     */
    const markHot = (state: TransferState) =>
      (marking ??= ledger.markHot(command.toAddress, clock.now() + HOT_FOR_MS).then((holds) => {
        if (holds > 0) rememberHot(state, holds);
        return holds;
      }));

    const deadline = command.answerBy - ledger.longestCommitMs - ANSWER_MARGIN_MS;
    try {
      return await retryMovement<SendMoneyResult>(
        // The payer's own other payments may keep it busy: it goes on trying while a transaction
        // started now still ends in time to answer, and only then answers 503.
        { at: deadline, message: 'The wallets are busy; retry the request' },
        async (attempt, beforeWrite) => {
          const state = known ?? (await ledger.read(transfer, claim, knownHot));
          known = undefined;
          if (state.claimed && state.claimed.expiresAt >= Math.floor(now / 1000)) {
            return { done: await replay(state.claimed.transfer, transfer, deadline) };
          }
          if (!state.payer.exists || state.payer.balance < amount) {
            if (!state.payer.exists) await ledger.openWallet(command.sub, transfer.createdAt);
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
          const hot = state.recipientHotUntil > clock.now();
          if (hot) rememberHot(state, state.recipientHotUntil);
          direct ??= !hot && mayCreditDirectly(await claiming, state, now);
          const clearing = !direct || hot;
          // A credit in transit is in the recipient's pending amount only once its marker exists:
          // none goes into transit before it is written.
          if (clearing && !hot && (await markHot(state)) === 0) {
            throw busy("The recipient's wallet cannot take payments right now; retry the request");
          }
          const sent = clearing ? { ...transfer, via: 'clearing' as const } : transfer;
          beforeWrite();
          const result = await ledger.commit({
            transfer: sent,
            claim,
            payer: state.payer,
            route: clearing ? { kind: 'clearing' } : { kind: 'direct', recipient: state.recipient },
            attempt,
          });
          switch (result.kind) {
            case 'committed':
              committed = true;
              return {
                done: { transfer: sent, status: clearing ? 'pending' : 'completed', replayed: false },
              };
            case 'key-claimed':
              return { done: await replay(result.transfer, transfer, deadline) };
            case 'recipient-busy':
              // Through the clearing account at once, on the same read unless the payer moved too;
              // the mark's write starts now, and the next attempt waits for it before its commit.
              direct = false;
              if (!result.payerMoved) known = state;
              markHot(state);
              return { again: 'now' };
            case 'payer-moved':
              return { again: result.inFlight ? 'after-pause' : 'now' };
          }
        },
      );
    } finally {
      // A payment that wrote nothing must not hold the recipient from direct credits. Past the
      // deadline there is no time left to say so (a write may take as long as a commit), and the
      // claim goes stale by itself within DIRECT_CLAIM_HOLDS_MS.
      const made = committed ? undefined : await claiming;
      if (made && Date.now() <= deadline) {
        await ledger.releaseDirectCredit(command.toAddress, transfer.transferId, made);
      }
    }
  };

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
   * The status a transfer has now: one read of its credit, for a transfer through the clearing
   * account. Past the deadline that read could outlast the request: busy instead, which the client
   * retries with its key (a key is what led here) and is answered in full.
   */
  async function statusOf(transfer: TransferRecord, deadline: number): Promise<TransferStatus> {
    if (transfer.via !== 'clearing') return 'completed';
    if (Date.now() > deadline)
      throw busy('The transfer was made; retry the request with its key for its status');
    return (await ledger.creditPosted(transfer.transferId)) ? 'completed' : 'pending';
  }
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
