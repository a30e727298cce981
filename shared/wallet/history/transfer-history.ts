import { NotFoundError } from '../../errors.ts';
import { addressOfAccount, CLEARING_ACCOUNT } from '../model/accounts.ts';
import type { EntryRecord } from '../model/entry.ts';
import { matchingOf } from '../model/matching.ts';
import { decodeCursor, encodeCursor, type HistoryPosition, InvalidCursorError } from './history-cursor.ts';
import type { HistoryStore, MovementRecord, PendingCredit } from './ports.ts';

/** One line of a wallet's history. */
export interface HistoryItem {
  readonly transferId: string;
  readonly direction: 'in' | 'out';
  readonly kind: 'transfer' | 'deposit';
  /** The other wallet; absent for a deposit. */
  readonly counterparty?: string | undefined;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
  readonly balanceAfterMinor: bigint;
  /** `pending` for a payment whose credit is still in transit to a hot wallet. */
  readonly status: 'pending' | 'completed';
  readonly reference?: string | undefined;
  readonly metadata?: Readonly<Record<string, string>> | undefined;
}

export interface ListTransfersCommand {
  readonly sub: string;
  /** 1–100. */
  readonly limit: number;
  /** The previous page's `nextCursor`. */
  readonly cursor?: string | undefined;
}

export interface TransferPage {
  readonly items: readonly HistoryItem[];
  /** On the first page: credits paid to the wallet and not yet posted, newest first. */
  readonly pending?: readonly PendingCredit[] | undefined;
  /** Present when older items remain. */
  readonly nextCursor?: string | undefined;
}

/**
 * The caller's movements, newest first, a page per call: ONE Query of the history index beside
 * ONE read of the wallet's hot marker (for a wallet ever hot, then one Query per shard of its
 * posted credits' entries), then the state of the page's payments to hot wallets (ONE
 * BatchGetItem, only when the page has any). The first page also lists the credits in transit to
 * the caller's wallet (for a wallet ever hot, one Query per shard of the `pending` index, before
 * the posted entries are read), each credit once. Entries
 * are numbered 1..n per wallet without gaps, so a page continues strictly below the last entry
 * shown: movements arriving meanwhile go on top, never into a page still to come, and there is
 * more exactly when that entry's number is above 1. A cursor names that entry (number and
 * transfer id): the query starts AT it, and an entry there of another transfer (an edited cursor)
 * is refused; when the index has none there, ONE strongly consistent read of the entry (and of
 * its credit: one more of its batch, for a batch posted and not completed) tells a replica behind
 * from a position no page gave. A page ends early at a number the index does not
 * have yet, and lists the table's copy of an entry the index does not show yet (below).
 */
export function makeListTransfers({
  history,
}: {
  history: Pick<HistoryStore, 'page' | 'entryAt' | 'creditsInTransit' | 'matching'>;
}) {
  return async ({ sub, limit, cursor }: ListTransfersCommand): Promise<TransferPage> => {
    let rows: EntryRecord[];
    let pending: PendingCredit[] | undefined;
    /** The entry the page continues below (a cursor's), if any. */
    let above: HistoryPosition | undefined;
    if (cursor === undefined) {
      ({ entries: rows, pending } = await history.page(sub, limit));
    } else {
      above = decodeCursor(sub, cursor);
      rows = (await history.page(sub, limit + 1, above.seq)).entries;
      const at = rows[0];
      if (at?.seq === above.seq) {
        if (at.transferId !== above.transferId) throw new InvalidCursorError();
        rows = rows.slice(1);
      } else {
        // Not there: an index replica that has not caught up with the one the previous page was
        // read from (its reads are eventually consistent), and the page goes on below it all the
        // same; or a position no page gave (edited), which the table itself tells. A page may end
        // on a credit of a batch posted and not completed, which has no entry item yet: the
        // table tells that from its credit and batch.
        if ((await history.entryAt(sub, above.seq, above.transferId))?.transferId !== above.transferId)
          throw new InvalidCursorError();
        rows = rows.slice(0, limit);
      }
    }
    // Numbers have no gaps, but the index receives each entry on its own, in no promised order: a
    // page ends before a number it does not have yet, so that the next page starts there and lists
    // the late entry, where a page past it would have left it out of the walk for good.
    if (above !== undefined && rows[0]?.seq !== above.seq - 1) {
      // Nothing right below the cursor in the index. The table tells an index behind (the entry is
      // there: the page lists it, and the walk moves on) from a batch posted a moment ago that the
      // replica does not show yet (no entry in the table either: docs/decisions/hot-wallets.md,
      // "What readers see between the steps"): then the page lists nothing and hands the cursor
      // back, for that moment, rather than go on below those numbers and leave them out for good.
      const below = await history.entryAt(sub, above.seq - 1);
      rows = below ? [below] : [];
    }
    const gap = rows.findIndex((entry, i) => {
      const before = i === 0 ? above : rows[i - 1];
      return before !== undefined && entry.seq !== before.seq - 1;
    });
    if (gap !== -1) rows = rows.slice(0, gap);
    // Beside it, the reference and metadata of posted credits, whose entries do not carry them.
    const [inTransit, matching] = await Promise.all([
      history.creditsInTransit(
        rows
          .filter((e) => e.direction === 'out' && e.counterpartyAccount === CLEARING_ACCOUNT)
          .map((e) => e.transferId),
      ),
      history.matching?.(rows.filter((e) => e.postedAt !== undefined).map((e) => e.transferId)),
    ]);
    const items = rows.map(
      (entry): HistoryItem => ({
        transferId: entry.transferId,
        direction: entry.direction,
        kind: entry.transferKind,
        counterparty: entry.counterpartyAddress ?? addressOfAccount(entry.counterpartyAccount),
        amountMinor: entry.amountMinor,
        currency: entry.currency,
        createdAt: entry.createdAt,
        balanceAfterMinor: BigInt(entry.balanceAfter),
        status: inTransit.has(entry.transferId) ? 'pending' : 'completed',
        ...matchingOf(entry.postedAt === undefined ? entry : (matching?.get(entry.transferId) ?? {})),
      }),
    );
    // A cursor's entry is above 1, so below it there is always an entry to come.
    const last = rows.at(-1) ?? above;
    // A credit posted while the page was read is both in transit and an entry: listed once, as
    // the entry when the page shows it.
    const shown = pending?.length ? new Set(rows.map((entry) => entry.transferId)) : undefined;
    const stillPending = pending?.filter((credit) => !shown?.has(credit.transferId));
    return {
      items,
      ...(stillPending?.length ? { pending: stillPending } : {}),
      nextCursor:
        last && last.seq > 1 ? encodeCursor(sub, { seq: last.seq, transferId: last.transferId }) : undefined,
    };
  };
}

/**
 * One movement, for its parties only: anyone else is told it does not exist (404, not 403, so
 * that an id confirms nothing). ONE BatchGetItem: the movement and its credit's state.
 */
export function makeGetTransfer({ history }: { history: Pick<HistoryStore, 'movement'> }) {
  return async ({ sub, transferId }: { sub: string; transferId: string }): Promise<MovementRecord> => {
    const movement = await history.movement(transferId);
    if (!movement || (movement.fromAddress !== sub && movement.toAddress !== sub)) {
      throw new NotFoundError('No transfer of yours has this id');
    }
    return movement;
  };
}
