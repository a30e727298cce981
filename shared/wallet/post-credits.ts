import { TemporarilyUnavailableError } from '../errors.ts';
import type { AccountState } from './ledger-commit.ts';
import { busy, retryMovement } from './movement-retry.ts';
import type { Clock } from './ports.ts';
import { recentEntries } from './recent-entries.ts';
import { HOT_FOR_MS } from './send-money.ts';

/** A credit in transit to a hot wallet, as the payer's transaction wrote it. */
export interface CreditInTransit {
  readonly transferId: string;
  /** The paying wallet's account and its entry of this payment. */
  readonly fromAccount: string;
  readonly fromSeq: number;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  /** The recipient's entry, once posted. */
  readonly postedSeq?: number | undefined;
}

/** One posting: the wallet as it stands, and the credits (not yet posted) it takes in, in order. */
export interface PostingPlan {
  readonly address: string;
  readonly wallet: AccountState;
  readonly credits: readonly CreditInTransit[];
  readonly postedAt: string;
}

export type PostingResult =
  | { readonly kind: 'posted' }
  /** The wallet changed since it was read (its owner paid, or another posting): read again. */
  | { readonly kind: 'wallet-moved' }
  /** A credit was posted meanwhile (a redelivered batch, another poller): read again. */
  | { readonly kind: 'credit-taken' };

/** The ledger as the credit poster needs it: declared here, implemented by ./credit-ledger.ts. */
export interface CreditLedger {
  /** The wallet and those of `transferIds` whose credit exists, strongly consistent, in one read. */
  read(
    address: string,
    transferIds: readonly string[],
  ): Promise<{ wallet: AccountState; credits: CreditInTransit[] }>;
  post(plan: PostingPlan): Promise<PostingResult>;
  /** Keeps `address` hot while its credits arrive: `TransferLedger.markHot`. */
  markHot(address: string, until: number): Promise<number>;
}

/**
 * The most credits one posting takes: the wallet, then an entry and the credit's mark per credit,
 * in one transaction of at most 100 items.
 */
export const MAX_CREDITS_PER_POSTING = 49;

/** How long a posting may keep trying before the batch is handed back to be delivered again. */
export const POSTING_DEADLINE_MS = 20_000;

/**
 * How long one call may go on starting postings: a wallet's credits are posted one batch after
 * another, and what is left past this is handed back to be delivered again. The last batch may
 * start just before it, its last write just before its own deadline, and the wallet's hot mark
 * follows: all of it inside the poster's timeout (infra/credit-poster-settings.ts), so that a
 * slow DynamoDB ends in records handed back, not in a timed-out invocation
 * (test/infra/dynamodb-time-budget.test.ts).
 */
export const POSTING_CALL_MS = 20_000;

/** How many wallets' states a poster keeps between its calls (the hot ones: a few). */
const KNOWN_WALLETS = 1_000;

/**
 * Posts credits in transit to one wallet, in batches: each batch is ONE transaction that writes
 * the wallet once (balance + the batch's sum, seq + its count), an entry per credit with its exact
 * running balance at seq + 1, + 2, …, and marks each credit posted on condition that it was not,
 * so a redelivered or concurrent batch posts nothing twice. Credits go in the order they were paid.
 *
 * The credits come as the stream announced them, and the wallet as the poster's last posting to it
 * left it: a wallet that only this poster writes (a hot one, while credits arrive) is posted to in
 * one round trip, without a read. Should either have moved on (its owner paid, another poller
 * posted, a batch was delivered again), the transaction's conditions refuse it, and the batch is
 * read (the wallet, and which credits are still due) and built again. The wallet stays hot while
 * credits arrive.
 */
export function makePostCredits({ ledger, clock }: { ledger: CreditLedger; clock: Clock }) {
  /** Each wallet as this poster's last posting to it left it. */
  const known = recentEntries<AccountState>(KNOWN_WALLETS);

  return async (address: string, announced: readonly CreditInTransit[]): Promise<{ posted: number }> => {
    let posted = 0;
    const credits = [...new Map(announced.map((credit) => [credit.transferId, credit])).values()].sort(
      paidOrder,
    );
    const started = Date.now();
    for (let start = 0; start < credits.length; start += MAX_CREDITS_PER_POSTING) {
      if (Date.now() - started > POSTING_CALL_MS)
        throw busy('Out of time for this batch; its credits are delivered again');
      const batch = credits.slice(start, start + MAX_CREDITS_PER_POSTING);
      posted += await retryMovement<number>(
        {
          at: Date.now() + POSTING_DEADLINE_MS,
          message: 'The wallet is busy; its credits are delivered again',
        },
        async (_attempt, beforeWrite) => {
          const remembered = known.get(address);
          known.delete(address);
          try {
            const { wallet, due } = remembered
              ? { wallet: remembered, due: batch }
              : await readDue(ledger, address, batch);
            if (due.length === 0) return { done: 0 };
            beforeWrite();
            const result = await ledger.post({
              address,
              wallet,
              credits: due,
              postedAt: new Date(clock.now()).toISOString(),
            });
            if (result.kind !== 'posted') return { again: remembered ? 'now' : 'after-pause' };
            const sum = due.reduce((total, credit) => total + BigInt(credit.amountMinor), 0n);
            known.set(address, { exists: true, balance: wallet.balance + sum, seq: wallet.seq + due.length });
            return { done: due.length };
          } catch (error) {
            // Throttled (or unanswered) past one call's tries: waited out within the deadline, not
            // handed back to the stream, whose bounded retries one short episode would use up. The
            // next attempt reads again, and a posting that did commit is not posted twice.
            if (error instanceof TemporarilyUnavailableError) return { again: 'after-pause' };
            throw error;
          }
        },
      );
    }
    if (posted > 0) await ledger.markHot(address, clock.now() + HOT_FOR_MS);
    return { posted };
  };
}

/** The order credits were paid in: the order they are posted in. */
const paidOrder = (a: CreditInTransit, b: CreditInTransit) =>
  a.createdAt.localeCompare(b.createdAt) || a.transferId.localeCompare(b.transferId);

/** The wallet as it is, and those of `batch` still to post (a credit posted meanwhile, or not found, is skipped). */
async function readDue(ledger: CreditLedger, address: string, batch: readonly CreditInTransit[]) {
  const { wallet, credits } = await ledger.read(
    address,
    batch.map((credit) => credit.transferId),
  );
  return { wallet, due: credits.filter((credit) => credit.postedSeq === undefined).sort(paidOrder) };
}
