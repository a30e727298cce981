import { InvalidParameterError } from '../errors.ts';

/** The longest `If-Match` read: far more than the few tags a client sends, far less than a header may hold. */
export const MAX_IF_MATCH_LENGTH = 1024;

/** The strong ETag of a revision: the revision quoted (RFC 9110 §8.8.3). */
export const etagOf = (revision: string): string => `"${revision}"`;

/** One entity-tag of a list (RFC 9110 §8.8.3): weak or not, its opaque characters, then a comma or the end. */
const ENTITY_TAG = /[ \t]*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(?:,|$)/y;

/**
 * What `If-Match` (RFC 9110 §13.1.1) demands: `any` for `*`; otherwise the revisions it names
 * (strong comparison: a weak tag never matches, so it names none); `undefined` without the header.
 * Lines of a repeated header are one list. A value that is no list of entity-tags is a 400, not
 * ignored: a client that meant a precondition must not see its write go through unchecked.
 */
export function ifMatchOf(values: readonly string[]): 'any' | readonly string[] | undefined {
  if (values.length === 0) return undefined;
  const text = values.join(',');
  const refuse = () =>
    new InvalidParameterError(
      'If-Match must be * or a list of entity-tags such as "3q2-7w", as an ETag gives them',
    );
  if (text.length > MAX_IF_MATCH_LENGTH) throw refuse();
  if (text.trim() === '*') return 'any';
  const revisions: string[] = [];
  ENTITY_TAG.lastIndex = 0;
  while (ENTITY_TAG.lastIndex < text.length) {
    const match = ENTITY_TAG.exec(text);
    if (!match) throw refuse();
    if (match[1] === undefined) revisions.push(match[2] as string);
  }
  if (ENTITY_TAG.lastIndex === 0) throw refuse();
  return revisions;
}
