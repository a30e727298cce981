import { InvalidParameterError } from '../../errors.ts';
import { decodeJsonCursor, encodeJsonCursor, ownerTag } from '../../util/json-cursor.ts';

/** A cursor that is not one this service gave to this caller: a 400, through InvalidParameterError's mapping. */
export class InvalidCursorError extends InvalidParameterError {
  constructor() {
    super('cursor is not a cursor of your transfers: start again without one');
  }
}

/** Where a page of history starts: the last entry the previous page showed. */
export interface HistoryPosition {
  readonly seq: number;
  readonly transferId: string;
}

/** The longest cursor accepted: what this service writes is under 100 characters. */
export const MAX_CURSOR_LENGTH = 200;

/** The opaque cursor of a position in `address`'s history. */
export function encodeCursor(address: string, position: HistoryPosition): string {
  return encodeJsonCursor([position.seq, position.transferId, ownerTag(address)]);
}

/**
 * The position a cursor names, if it is a well-formed cursor of `address`; otherwise an
 * {@link InvalidCursorError}. Whether that position holds that transfer is checked by the page's
 * own query, or a read of the entry where the index has yet to show it (see `makeListTransfers`):
 * an edited cursor naming another transfer or a position that never was fails there.
 */
export function decodeCursor(address: string, cursor: string): HistoryPosition {
  const decoded = decodeJsonCursor(cursor, { maxLength: MAX_CURSOR_LENGTH, length: 3 });
  if (!decoded) throw new InvalidCursorError();
  const [seq, transferId, tag] = decoded;
  if (
    !Number.isSafeInteger(seq) ||
    (seq as number) < 2 ||
    typeof transferId !== 'string' ||
    transferId.length > 64 ||
    tag !== ownerTag(address)
  ) {
    throw new InvalidCursorError();
  }
  return { seq: seq as number, transferId };
}
