import { createHash } from 'node:crypto';
import { InvalidParameterError } from '../errors.ts';
import { decodeJsonCursor, encodeJsonCursor } from '../util/json-cursor.ts';

/**
 * Where the next page of a search starts: in which part (a shard of one of the statuses, or the
 * n-th tag of the query) and after which pet id in it (none: from the part's start).
 */
export interface PagePosition {
  readonly part: number;
  readonly after?: number;
}

/**
 * The search a `findByStatus` cursor is bound to. One status keeps the name it had before several
 * could be asked for, so that the cursors already given stay valid.
 */
export function statusSearch(statuses: readonly string[]): string {
  const sorted = [...new Set(statuses)].sort();
  return sorted.length === 1 ? `status:${sorted[0]}` : `status:${JSON.stringify(sorted)}`;
}

/** The search a `findByTags` cursor is bound to: the query's tag names as indexed, sorted, each once. */
export const tagsSearch = (sortedIndexedTags: readonly string[]): string =>
  `tags:${JSON.stringify(sortedIndexedTags)}`;

/** A cursor this service did not give for this very search: a 400, through InvalidParameterError's mapping. */
export class InvalidCursorError extends InvalidParameterError {
  constructor() {
    super('cursor is not the cursor of a next page of this search: start again without one');
  }
}

/** The longest cursor accepted: what this service writes is under 80 characters. */
export const MAX_CURSOR_LENGTH = 128;

const digest = (...parts: readonly string[]): string =>
  createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 16);

/**
 * The opaque cursor of a position in `search` (e.g. `status:available`, or the query's tags): the
 * position, bound to the search by a hash of it and sealed by a hash of both
 * (docs/decisions/pet-search.md). Any change of its text, or its use with another search, is
 * refused; it carries no secret and gives nothing a caller with `read:pets` cannot read anyway.
 */
export function encodeCursor(search: string, position: PagePosition): string {
  const body = [position.part, position.after ?? null, digest('search', search)];
  return encodeJsonCursor([...body, digest('seal', JSON.stringify(body))]);
}

/** The position a cursor of `search` names, with `part` below `parts`; otherwise an {@link InvalidCursorError}. */
export function decodeCursor(search: string, cursor: string, parts: number): PagePosition {
  const decoded = decodeJsonCursor(cursor, { maxLength: MAX_CURSOR_LENGTH, length: 4 });
  if (!decoded) throw new InvalidCursorError();
  const [part, after, bound, seal] = decoded;
  if (
    seal !== digest('seal', JSON.stringify([part, after, bound])) ||
    bound !== digest('search', search) ||
    !Number.isSafeInteger(part) ||
    (part as number) < 0 ||
    (part as number) >= parts ||
    (after !== null && !Number.isSafeInteger(after))
  ) {
    throw new InvalidCursorError();
  }
  return { part: part as number, ...(after === null ? {} : { after: after as number }) };
}
