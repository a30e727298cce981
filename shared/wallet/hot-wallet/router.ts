import { recentEntries } from '../../util/recent-entries.ts';
import type { AccountState } from '../model/accounts.ts';
import { busy } from '../model/movement-retry.ts';
import type { Clock } from '../model/ports.ts';
import type { DirectClaimStore, DirectCreditClaim, HotMarkerStore } from './ports.ts';

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

/** What a payment read of its recipient: all the router decides on. */
export interface RecipientView {
  readonly recipient: AccountState;
  /** Epoch ms until which the recipient is hot (0: never marked): credit it through the clearing account. */
  readonly recipientHotUntil: number;
  /** The last direct-credit claim settled on the recipient's wallet (its payment credited it). */
  readonly recipientDirectClaim?: string | undefined;
}

/**
 * The recipient as a container remembers it while it knows the recipient is hot: its wallet as
 * last read and until when its mark holds. Given to the read, it is not read again.
 */
export type HotRecipient = Pick<RecipientView, 'recipient' | 'recipientHotUntil'>;

/** Where one payment's credit goes: onto the recipient's wallet, or into the clearing account. */
export type CreditRoute = 'direct' | 'clearing';

/** The router's part in one payment, from its first read to its answer. */
export interface PaymentRouting {
  /** The recipient as this container remembers it while it is known hot: the read leaves it out. */
  readonly known: HotRecipient | undefined;
  /**
   * Where the credit goes on this read. A credit in transit is in the recipient's pending amount
   * only once its marker exists, so none goes into transit before it is written: a mark that
   * cannot be written is a busy refusal (503), never a credit the balance would miss.
   */
  routeOn(state: RecipientView): Promise<CreditRoute>;
  /**
   * The recipient's wallet was in another transaction: from now on through the clearing account,
   * and the mark's write starts now (the next `routeOn` waits for it).
   */
  contended(state: RecipientView): void;
  /**
   * The payment is over: one that wrote nothing must not hold the recipient from direct credits,
   * so its claim is withdrawn, unless `deadline` has passed (a write may take as long as a commit,
   * and the claim goes stale by itself within DIRECT_CLAIM_HOLDS_MS).
   */
  settle(committed: boolean, deadline: number): Promise<void>;
}

export interface HotWalletRouter {
  /** Starts routing the payment `paymentId` to `toAddress`: its claim is sent at once, beside the read. */
  begin(toAddress: string, paymentId: string, now: number): PaymentRouting;
}

/**
 * Whether a payment may write the recipient's wallet itself: only if the claim before its own is
 * settled there (or stale, or there was none), so that of the payments arriving at a wallet
 * together only the first tries it, and the others never name it in a transaction that would fail.
 */
export function mayCreditDirectly(claim: DirectCreditClaim | undefined, state: RecipientView, now: number) {
  if (!claim) return false;
  const { previous } = claim;
  return (
    previous === undefined ||
    previous.claimId === state.recipientDirectClaim ||
    previous.claimedAt < now - DIRECT_CLAIM_HOLDS_MS
  );
}

export interface HotWalletRouterDependencies {
  readonly claims: DirectClaimStore;
  readonly marker: HotMarkerStore;
  readonly clock: Clock;
}

/**
 * Decides, payment by payment, whether a credit goes straight onto the recipient's wallet or through
 * the clearing account (docs/decisions/hot-wallets.md):
 * 1. A recipient this container knows is hot is neither read nor claimed: wallets never close, and
 *    at thousands of payments a second every payer reading its item would take more than an item's
 *    read throughput. Its payments go through the clearing account.
 * 2. Otherwise the payment claims the recipient's direct credit beside its read, and writes the
 *    wallet itself only when its claim allows it (`mayCreditDirectly`).
 * 3. A recipient found contended (another claim in flight, or its wallet in another transaction) is
 *    marked hot, and the payment goes through the clearing account at once, so no payment waits for
 *    other payments to the same wallet.
 * The container remembers the hot recipients it saw, and the mark once written, for as long as the
 * mark holds.
 */
export function makeHotWalletRouter({ claims, marker, clock }: HotWalletRouterDependencies): HotWalletRouter {
  const hotSeen = recentEntries<HotRecipient>(HOT_RECIPIENTS_REMEMBERED);

  function begin(toAddress: string, paymentId: string, now: number): PaymentRouting {
    const seen = hotSeen.get(toAddress);
    const known = seen && seen.recipientHotUntil > now ? seen : undefined;
    const claiming = known ? Promise.resolve(undefined) : claims.claimDirectCredit(toAddress, paymentId, now);
    /** Whether this payment may credit the recipient directly: decided on its first read. */
    let direct: boolean | undefined;
    let marking: Promise<number> | undefined;
    // Only the recipient's part of what was read: the rest (payer, key) is the payment's alone.
    const rememberHot = (state: RecipientView, until: number) =>
      hotSeen.set(toAddress, { recipient: state.recipient, recipientHotUntil: until });
    /**
     * Marks the recipient hot, once per payment; answers until when the mark holds (0: not written).
     * Remembered only once written: a payment that trusted a mark never written would put its credit
     * in transit where the balance read does not look (it looks once marked).
     */
    const markHot = (state: RecipientView) =>
      (marking ??= marker.markHot(toAddress, clock.now() + HOT_FOR_MS).then((holds) => {
        if (holds > 0) rememberHot(state, holds);
        return holds;
      }));

    return {
      known,
      async routeOn(state) {
        const hot = state.recipientHotUntil > clock.now();
        if (hot) rememberHot(state, state.recipientHotUntil);
        direct ??= !hot && mayCreditDirectly(await claiming, state, now);
        if (direct && !hot) return 'direct';
        if (!hot && (await markHot(state)) === 0) {
          throw busy("The recipient's wallet cannot take payments right now; retry the request");
        }
        return 'clearing';
      },
      contended(state) {
        direct = false;
        markHot(state);
      },
      async settle(committed, deadline) {
        const made = committed ? undefined : await claiming;
        if (made && Date.now() <= deadline) await claims.releaseDirectCredit(toAddress, paymentId, made);
      },
    };
  }

  return { begin };
}
