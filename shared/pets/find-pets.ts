import type { Pet } from './pet.ts';
import { decodeCursor, encodeCursor, type PagePosition, statusSearch, tagsSearch } from './pet-cursor.ts';
import { indexedTagName, STATUS_SHARDS, tagNamesOf } from './pet-index.ts';
import type { StoredPet } from './pets.ts';

/** Pet ids of one key of an index, in id order, after a position: what a search pages through. */
export interface IdPage {
  readonly ids: readonly number[];
  /** Whether the key may hold more after the last id (DynamoDB's `LastEvaluatedKey`). */
  readonly more: boolean;
}

/** The pets table's indexes, as the searches read them (`pet-search-repository.ts` on DynamoDB). */
export interface PetIndex {
  /** At most `limit` ids of pets in a shard of a status, after `after`, with one Query. */
  statusIds(status: string, shard: number, after: number | undefined, limit: number): Promise<IdPage>;
  /** At most `limit` ids of pets carrying a tag name, after `after`, with one Query. */
  tagIds(tag: string, after: number | undefined, limit: number): Promise<IdPage>;
  /** The pets with these ids as they are stored now (strongly consistent); absent ones left out. */
  read(ids: readonly number[]): Promise<ReadonlyMap<number, StoredPet>>;
}

/**
 * How much of an answer a page may fill, besides `limit`: the bytes each pet takes in it, and the
 * most a page's pets may take in all. A page ends early, before the pet that would pass the bound
 * (never before its first), and the next page starts there.
 */
export interface AnswerBound {
  readonly bytesOf: (stored: StoredPet) => number;
  readonly maxBytes: number;
}

/** A page of a search: at most `limit` pets, and the cursor of the next page when there may be one. */
export interface PetPage {
  readonly pets: readonly StoredPet[];
  readonly next?: string;
}

export interface FindPetsByStatusCommand {
  /** Statuses, each a pet may have; order and repeats do not matter. */
  readonly statuses: readonly NonNullable<Pet['status']>[];
  readonly limit: number;
  readonly cursor?: string;
}

export interface FindPetsByTagsCommand {
  /** Tag names, each a pet must carry one of; order and repeats do not matter. */
  readonly tags: readonly string[];
  readonly limit: number;
  readonly cursor?: string;
}

/**
 * Reads the parts of a search in turn (the shards of a status, the tags of a query), each from
 * where the previous page stopped, with one Query per part read and never more than `limit` ids in
 * all, then the pets themselves in one consistent read. A page ends when it is full or the parts
 * are done; a part that may hold more is where the next page starts. It also ends before a pet
 * that would take the answer past `bound`: `limit` counts pets, whose size the schema bounds only
 * one by one (a page of 100 pets of the largest could outgrow Lambda's 6 MB answer). It also ends
 * after `maxReads` Queries, at the next part, so a search of many parts costs a page no more round
 * trips than one of a single status.
 */
async function page(
  index: PetIndex,
  bound: AnswerBound | undefined,
  search: string,
  parts: number,
  ids: (part: number, after: number | undefined, limit: number) => Promise<IdPage>,
  keep: (pet: Pet, part: number) => boolean,
  {
    limit,
    cursor,
    maxReads = parts,
  }: { readonly limit: number; readonly cursor?: string | undefined; readonly maxReads?: number },
): Promise<PetPage> {
  let { part, after }: PagePosition =
    cursor === undefined ? { part: 0 } : decodeCursor(search, cursor, parts);
  const found: { id: number; part: number }[] = [];
  let next: PagePosition | undefined;
  let reads = 0;
  while (part < parts) {
    const read = await ids(part, after, limit - found.length);
    reads += 1;
    for (const id of read.ids) found.push({ id, part });
    const last = read.ids.at(-1);
    if (read.more && last !== undefined) {
      next = { part, after: last };
      break;
    }
    part += 1;
    after = undefined;
    if (found.length >= limit || reads >= maxReads) {
      next = part < parts ? { part } : undefined;
      break;
    }
  }
  const pets = await index.read(found.map((entry) => entry.id));
  // The indexes follow the table within milliseconds, not at once: a pet the index places here but
  // which no longer belongs (its status or tags just changed, or it is gone) is left out.
  const kept: StoredPet[] = [];
  let bytes = 0;
  for (const [i, { id, part }] of found.entries()) {
    const stored = pets.get(id);
    if (stored === undefined || !keep(stored.pet, part)) continue;
    bytes += bound?.bytesOf(stored) ?? 0;
    const before = found[i - 1];
    if (bound !== undefined && bytes > bound.maxBytes && before !== undefined && kept.length > 0) {
      // The next page starts at this pet: after the id read before it, in that id's part.
      next = { part: before.part, after: before.id };
      break;
    }
    kept.push(stored);
  }
  return { pets: kept, ...(next === undefined ? {} : { next: encodeCursor(search, next) }) };
}

export interface SearchDependencies {
  readonly index: PetIndex;
  /** The bytes a page may fill (the HTTP answer's: `pet-http.ts`); none in the use case's unit tests. */
  readonly bound?: AnswerBound;
}

/**
 * Pets with any of the statuses, a page at a time, over each status's shards in turn (pet-index.ts):
 * a pet has one status, so each is answered once. A page reads at most {@link STATUS_SHARDS} shards,
 * as a page of one status can, whatever the number of statuses.
 */
export const makeFindPetsByStatus =
  ({ index, bound }: SearchDependencies) =>
  ({ statuses, limit, cursor }: FindPetsByStatusCommand): Promise<PetPage> => {
    const sorted = [...new Set(statuses)].sort();
    if (sorted.length === 0) return Promise.resolve({ pets: [] });
    const statusOf = (part: number) => sorted[Math.floor(part / STATUS_SHARDS)] as string;
    return page(
      index,
      bound,
      statusSearch(sorted),
      sorted.length * STATUS_SHARDS,
      (part, after, count) => index.statusIds(statusOf(part), part % STATUS_SHARDS, after, count),
      (pet, part) => pet.status === statusOf(part),
      { limit, cursor, maxReads: STATUS_SHARDS },
    );
  };

/**
 * Pets carrying any of the tags, each once, a page at a time: the tags are read one after another,
 * in one fixed order (sorted), and a pet is answered under the first of them it carries, whichever
 * of them led to it.
 */
export const makeFindPetsByTags =
  ({ index, bound }: SearchDependencies) =>
  ({ tags, limit, cursor }: FindPetsByTagsCommand): Promise<PetPage> => {
    const sorted = [...new Set(tags.map(indexedTagName))].sort();
    if (sorted.length === 0) return Promise.resolve({ pets: [] });
    return page(
      index,
      bound,
      tagsSearch(sorted),
      sorted.length,
      (part, after, count) => index.tagIds(sorted[part] as string, after, count),
      (pet, part) => {
        const names = new Set(tagNamesOf(pet));
        return names.has(sorted[part] as string) && !sorted.slice(0, part).some((tag) => names.has(tag));
      },
      { limit, cursor },
    );
  };
