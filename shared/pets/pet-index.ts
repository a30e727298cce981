import { createHash } from 'node:crypto';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { ValidationError } from '../errors.ts';
import { tagSchema } from '../schemas/pet.ts';
import type { Pet } from './pet.ts';

/**
 * How the pets table indexes its pets (docs/decisions/pet-search.md): one item per pet keyed by
 * `id`, which carries `statusShard` for the `status` index, and one tag entry per distinct tag
 * name of a pet, written in the same transaction as the pet, for the `tags` index.
 */

/** The `status` index: pets by `statusShard` (`<status>#<shard>`), then `id`. */
export const STATUS_INDEX = 'status';
/** The `tags` index: tag entries by `tag`, then `petId`. */
export const TAGS_INDEX = 'tags';

/**
 * Shards of one status. An index entry is keys only (under 1 KB, one write unit), and only a write
 * that changes a pet's status touches the index at all; 1,000 pet writes/s into one status are 125
 * write units/s per shard key, an eighth of DynamoDB's 1,000 per partition.
 */
export const STATUS_SHARDS = 8;

/** A pet's shard: from a hash of its id, so that no choice of ids puts every pet of a status in one. */
export function shardOf(id: number): number {
  return createHash('sha256').update(String(id)).digest().readUInt8(0) % STATUS_SHARDS;
}

/** The `status` index key of a status's shard. */
export const statusShardKey = (status: string, shard: number): string => `${status}#${shard}`;

/** The `statusShard` a pet is stored with; `undefined` for a pet without a status (in no shard). */
export const statusShardOf = (pet: Pick<Pet, 'id' | 'status'>): string | undefined =>
  pet.status === undefined ? undefined : statusShardKey(pet.status, shardOf(pet.id));

/**
 * A tag name as the index keys it and a search matches it: in Unicode normalization form C, so
 * that `Café` typed with a combining accent (NFD, as macOS file names and some keyboards give it)
 * and with the precomposed `é` are one tag, as they look and as a user means them. The pet keeps
 * its tags as sent.
 */
export const indexedTagName = (name: string): string => name.normalize('NFC');

/**
 * Whether a tag name is as long, indexed, as the schema lets it be sent (256 code points, at most
 * 1 KB of UTF-8 under DynamoDB's 2 KB index key). Normalising can lengthen a name: a few code points
 * (musical symbols such as U+1D160) are excluded from composition and become three, so 256 of them
 * would make a key of 3 KB, which DynamoDB refuses.
 */
export const isIndexableTagName = (name: string): boolean => {
  let length = 0;
  for (const _ of indexedTagName(name)) if (++length > tagSchema.properties.name.maxLength) return false;
  return true;
};

/** Refuses (422) a pet with a tag name too long once indexed ({@link isIndexableTagName}). */
export function assertIndexableTags(pet: Pick<Pet, 'tags'>): void {
  const violations = (pet.tags ?? []).flatMap((tag, index) =>
    tag.name === undefined || isIndexableTagName(tag.name)
      ? []
      : [
          {
            pointer: `/tags/${index}/name`,
            detail: `must be at most ${tagSchema.properties.name.maxLength} characters in Unicode normalization form C`,
          },
        ],
  );
  if (violations.length > 0) throw new ValidationError(violations);
}

/** The distinct tag names of a pet as indexed, which its tag entries index (a tag without a name has none). */
export function tagNamesOf(pet: Pick<Pet, 'tags'>): string[] {
  const names = new Set<string>();
  for (const tag of pet.tags ?? []) if (tag.name !== undefined) names.add(indexedTagName(tag.name));
  return [...names];
}

/**
 * Tag entries live in the pets table, whose key is the number `id`; pet ids are within
 * ±(2^53 − 1), so entries take ids of 38 digits, from 10^37 up, out of reach of any pet and of the
 * API (`petId` parameters are safe integers). The id is a 120-bit hash of the pet and the tag, so
 * an entry is found again from the pet alone, to be removed with it.
 */
const ENTRY_ID_BASE = 10n ** 37n;

export function tagEntryId(petId: number, tag: string): NumberValue {
  const digest = createHash('sha256').update(`${petId}\u0000${tag}`).digest();
  const hash = BigInt(`0x${digest.subarray(0, 15).toString('hex')}`);
  return NumberValue.from((ENTRY_ID_BASE + hash).toString());
}

/**
 * The record of an add's Idempotency-Key takes an id of 38 digits from 2·10^37 up: above every tag
 * entry's (10^37 plus at most 2^120, about 1.3·10^36), out of reach of pets and of the API alike.
 * A 120-bit hash of the caller and the key, so the caller's next request with the key finds it.
 */
const KEY_ENTRY_ID_BASE = 2n * 10n ** 37n;

export function keyEntryId(owner: string, key: string): NumberValue {
  const digest = createHash('sha256')
    .update(JSON.stringify([owner, key]))
    .digest();
  const hash = BigInt(`0x${digest.subarray(0, 15).toString('hex')}`);
  return NumberValue.from((KEY_ENTRY_ID_BASE + hash).toString());
}

/** The item of a pet's tag entry. */
export const tagEntry = (petId: number, tag: string) => ({ id: tagEntryId(petId, tag), tag, petId });
