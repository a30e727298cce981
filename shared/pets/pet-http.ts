import { InvalidParameterError } from '../errors.ts';
import type { HttpRequest, HttpResult } from '../http/handler.ts';
import { enumParameter, pageLimitParameter, textParameter } from '../http/parameters.ts';
import { etagOf, ifMatchOf } from '../http/preconditions.ts';
import { PRINTABLE_TEXT } from '../schemas/common.ts';
import { petSchema, tagSchema } from '../schemas/pet.ts';
import type { AnswerBound } from './find-pets.ts';
import type { Pet } from './pet.ts';
import type { Expected } from './pet-changes.ts';
import { MAX_CURSOR_LENGTH } from './pet-cursor.ts';
import { isIndexableTagName } from './pet-index.ts';
import { petRepresentation } from './pet-representation.ts';
import type { StoredPet } from './pets.ts';

/**
 * What the pet routes' edges share: a pet answered with its ETag, `If-Match` read as the use
 * cases' expectation, and the parameters of the searches with their bounds.
 */

/** 200 with the pet, in the schema's member order, and its revision as a strong ETag. */
export const petAnswer = ({ pet, revision }: StoredPet): HttpResult => ({
  statusCode: 200,
  body: petRepresentation(pet),
  headers: { etag: etagOf(revision) },
});

/** The revisions `If-Match` names, if sent (shared/http/preconditions.ts). */
export const expectedOf = (request: HttpRequest<unknown>): Expected =>
  ifMatchOf(request.headerValues('if-match'));

export const PET_STATUSES = petSchema.properties.status.enum;
export type PetStatus = NonNullable<Pet['status']>;

/** The most tags one `findByTags` may name, as a pet may carry. */
export const MAX_QUERY_TAGS = petSchema.properties.tags.maxItems;

/** `limit` of a search, as every listing's (PAGE_SIZE). */
export const limitOf = (request: HttpRequest<unknown>): number => pageLimitParameter(request.query.limit);

/** `cursor` of a search, if sent; its content is checked by the search (pet-cursor.ts). */
export function cursorOf(request: HttpRequest<unknown>): string | undefined {
  const cursor = request.query.cursor;
  if (cursor === undefined) return undefined;
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) {
    throw new InvalidParameterError(
      'cursor is not the cursor of a next page of this search: start again without one',
    );
  }
  return cursor;
}

/** `status` of the form update: one of the Petstore's three. */
export const statusOf = (raw: string): PetStatus => enumParameter('status', raw, PET_STATUSES);

/**
 * The statuses of `findByStatus`, repeated (`?status=sold&status=pending`) or comma-separated as
 * the Petstore sends them (`?status=sold,pending`), or both; `available` when none is given, as the
 * Petstore's default. Each one of the three: an empty piece (`sold,`) is refused, as with tags.
 */
export function statusesOf(request: HttpRequest<unknown>): PetStatus[] {
  const values = request.queryValues('status').flatMap((value) => value.split(','));
  if (values.length === 0) return ['available'];
  return [...new Set(values.map((value) => enumParameter('each of status', value, PET_STATUSES)))];
}

/**
 * The `tags` of `findByTags`, repeated (`?tags=a&tags=b`) or comma-separated as the Petstore sends
 * them (`?tags=a,b`), or both: at most {@link MAX_QUERY_TAGS} once split, each a tag name's length.
 * An empty piece (`a,,b`, `a,`) is refused as an empty parameter is: a client that built the list
 * wrongly should hear so, not get the pets of the tags that were left.
 */
export function tagsOf(request: HttpRequest<unknown>): string[] {
  // API Gateway decodes `%2C` before we see it, so a comma can only ever separate tags: a pet's tag
  // with a comma in its name is stored but no search can name it (docs/decisions/pet-search.md).
  const tags = request.queryValues('tags').flatMap((value) => value.split(','));
  if (tags.length > MAX_QUERY_TAGS) {
    throw new InvalidParameterError(
      `tags may name at most ${MAX_QUERY_TAGS} tags (comma-separated or one parameter each, counted together)`,
    );
  }
  const { minLength: min, maxLength: max } = tagSchema.properties.name;
  return tags.map((tag) => {
    textParameter('each of tags', tag, { min, max, pattern: PRINTABLE_TEXT });
    if (!isIndexableTagName(tag)) {
      throw new InvalidParameterError(
        `each of tags must be at most ${max} characters in Unicode normalization form C, as a pet's tags are`,
      );
    }
    return tag;
  });
}

/**
 * The most a page of pets may take of the function's answer, as Lambda counts it: 4 MB of the
 * 6 MB (6,291,456 bytes) a synchronous answer may have, leaving room for its headers and `Link`.
 */
export const MAX_PAGE_ANSWER_BYTES = 4_000_000;

/**
 * The bytes a pet takes in a page's answer: its representation as JSON, written again as the JSON
 * string Lambda's answer carries the body in (a quotation mark, 1 byte in the pet, is 4 there).
 */
export const answerBytesOf = (stored: StoredPet): number =>
  Buffer.byteLength(JSON.stringify(JSON.stringify(petRepresentation(stored.pet)))) - 1;

/** The bound of a search page's answer, for the search functions' composition roots. */
export const PAGE_ANSWER_BOUND: AnswerBound = { bytesOf: answerBytesOf, maxBytes: MAX_PAGE_ANSWER_BYTES };

/**
 * A page of pets, and the next page's address in `Link` (RFC 8288) when there may be one: the
 * request's own query with the cursor in place of any given, as a reference relative to the
 * request, so that it holds behind any stage or domain.
 */
export function pageAnswer(
  pets: readonly StoredPet[],
  next: string | undefined,
  query: readonly (readonly [string, string])[],
): HttpResult {
  const body = pets.map((stored) => petRepresentation(stored.pet));
  if (next === undefined) return { statusCode: 200, body };
  const params = new URLSearchParams(query.filter(([name]) => name !== 'cursor') as [string, string][]);
  params.append('cursor', next);
  return { statusCode: 200, body, headers: { link: `<?${params}>; rel="next"` } };
}
