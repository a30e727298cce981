import { createHash } from 'node:crypto';

/*
 * The frame every page cursor shares: a JSON array, written as base64url. What the array holds and
 * binds it to (an owner, a search, a seal) is each cursor's own (history-cursor.ts, pet-cursor.ts,
 * the webhook stores), and so is the error a cursor that is not theirs gets.
 */

/** The opaque text of a cursor holding `parts`. */
export const encodeJsonCursor = (parts: readonly unknown[]): string =>
  Buffer.from(JSON.stringify(parts)).toString('base64url');

/**
 * The `length` items a cursor holds, if it is at most `maxLength` base64url characters of a JSON
 * array of that length; `undefined` for anything else, which the caller refuses as its own.
 */
export function decodeJsonCursor(
  cursor: string,
  { maxLength, length }: { readonly maxLength: number; readonly length: number },
): unknown[] | undefined {
  if (cursor.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return Array.isArray(decoded) && decoded.length === length ? decoded : undefined;
}

/**
 * Binds a cursor to its owner without a secret: a short hash of the address, of one length however
 * long the address (a 256-character address carried whole outgrew the cursor's own bound). It
 * hides nothing (a cursor only ever reads its owner's own pages); it tells another caller's cursor
 * from one's own, which is refused rather than silently read from.
 */
export const ownerTag = (address: string): string =>
  createHash('sha256').update(address).digest('base64url').slice(0, 16);
