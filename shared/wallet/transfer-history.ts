import { NotFoundError } from '../errors.ts';
import { decodeCursor, encodeCursor, InvalidCursorError } from './history-cursor.ts';
import type { HistoryRepository, MovementRecord } from './history-repository.ts';
import { addressOfAccount, type EntryRecord, walletAccount } from './ledger-keys.ts';

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
  /** Present when older items remain. */
  readonly nextCursor?: string | undefined;
}

/**
 * The caller's movements, newest first, a page per call: ONE Query of the history index. Entries
 * are numbered 1..n per wallet without gaps, so a page continues strictly below the last entry
 * shown: movements arriving meanwhile go on top, never into a page still to come, and there is
 * more exactly when that entry's number is above 1. A cursor names that entry (number and
 * transfer id): the query starts AT it, and it must be there, so an edited cursor is refused.
 */
export function makeListTransfers({ history }: { history: Pick<HistoryRepository, 'entries'> }) {
  return async ({ sub, limit, cursor }: ListTransfersCommand): Promise<TransferPage> => {
    const account = walletAccount(sub);
    let rows: EntryRecord[];
    if (cursor === undefined) {
      rows = await history.entries(account, limit);
    } else {
      const position = decodeCursor(sub, cursor);
      const [at, ...after] = await history.entries(account, limit + 1, position.seq);
      if (at?.seq !== position.seq || at.transferId !== position.transferId) throw new InvalidCursorError();
      rows = after;
    }
    const items = rows.map(
      (entry): HistoryItem => ({
        transferId: entry.transferId,
        direction: entry.direction,
        kind: entry.transferKind,
        counterparty: addressOfAccount(entry.counterpartyAccount),
        amountMinor: entry.amountMinor,
        currency: entry.currency,
        createdAt: entry.createdAt,
        balanceAfterMinor: BigInt(entry.balanceAfter),
      }),
    );
    const last = rows.at(-1);
    return {
      items,
      nextCursor:
        last && last.seq > 1 ? encodeCursor(sub, { seq: last.seq, transferId: last.transferId }) : undefined,
    };
  };
}

/**
 * One movement, for its parties only: anyone else is told it does not exist (404, not 403, so
 * that an id confirms nothing). ONE GetItem.
 */
export function makeGetTransfer({ history }: { history: Pick<HistoryRepository, 'movement'> }) {
  return async ({ sub, transferId }: { sub: string; transferId: string }): Promise<MovementRecord> => {
    const movement = await history.movement(transferId);
    if (!movement || (movement.fromAddress !== sub && movement.toAddress !== sub)) {
      throw new NotFoundError('No transfer of yours has this id');
    }
    return movement;
  };
}
