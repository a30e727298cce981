import { isDeepStrictEqual } from 'node:util';
import { AlreadyExistsError, IdempotencyKeyReuseError, NotFoundError } from '../errors.ts';
import type { Pet, PetInput } from './pet.ts';
import { assertIndexableTags } from './pet-index.ts';

/**
 * A pet as stored: the pet and its revision, which changes with every write of it and is never
 * reused (a pet deleted and added again has a new one). The edge shows it as the pet's ETag.
 */
export interface StoredPet {
  readonly pet: Pet;
  readonly revision: string;
}

/** An add's Idempotency-Key: whose, the key, the request it came with, and until when it holds. */
export interface AddKey {
  readonly owner: string;
  readonly key: string;
  readonly request: PetInput;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

/** What an add with a key used before finds: the request of the first add, and the pet it added. */
export interface KeyUse {
  readonly request: PetInput;
  readonly added: StoredPet;
}

/**
 * How an insert ended: stored (its revision; also when the very same pet was stored before); the
 * pet's id another pet's (neither); or, with a key, the key already used (nothing written).
 */
export interface Inserted {
  readonly revision?: string;
  readonly keyUsed?: KeyUse;
}

/** Where pets are kept (`pet-repository.ts` on DynamoDB; an in-memory map in the unit tests). */
export interface PetRepository {
  /**
   * Stores a new pet and its index entries, with `key`'s record in the same transaction when
   * given (a record past its expiry counts as none). When the very same pet was stored before,
   * `key`'s record is written alone, with the stored revision.
   */
  insert(pet: Pet, key?: AddKey): Promise<Inserted>;
  /** The pet with this id, as stored, or `undefined`. */
  find(id: number): Promise<StoredPet | undefined>;
  /**
   * Replaces `current` by `pet` (same id) and its index entries with the new pet's, if the stored
   * pet is still at `current.revision`: the new revision; `undefined` when it has changed, is gone,
   * or another write of it was in flight (read it again to tell which).
   */
  replace(current: StoredPet, pet: Pet): Promise<string | undefined>;
  /** Removes `current` and its index entries if still at `current.revision` (`false` as for `replace`). */
  remove(current: StoredPet): Promise<boolean>;
}

/** A pet to add: the validated body of `addPet`, with or without an id. */
export type AddPetCommand = PetInput;

/** The caller's Idempotency-Key for an add, when sent. */
export interface AddPetKey {
  readonly owner: string;
  readonly key: string;
}

/** An added pet, and whether it was added by an earlier request with the same key (a replay). */
export interface AddedPet extends StoredPet {
  readonly replayed: boolean;
}

/** The pet to read, by an id the edge already parsed. */
export interface GetPetCommand {
  readonly id: number;
}

export interface AddPetDependencies {
  readonly pets: PetRepository;
  /** Draws a new pet id (`createPetIds()`). */
  readonly ids: () => number;
  /** Epoch ms, for when a key expires (`Date.now` unless given). */
  readonly now?: () => number;
}

/** How many fresh ids a new pet may draw before the use case gives up. */
const ID_ATTEMPTS = 3;

/** How long an add's Idempotency-Key holds: a day, as the wallet's do at the least. */
export const ADD_KEY_TTL_SECONDS = 86_400;

/**
 * Adds a pet to the catalog.
 * 1. A pet with an id is stored under it, or refused if another pet has that id (never
 *    overwritten); the very same pet again is answered as stored.
 * 2. A pet without one gets a new time-ordered id; a collision, rare by design, draws another.
 * 3. With an Idempotency-Key, the key's record is written in the same transaction: the caller's
 *    next add with the key and the same body is answered with the pet the first added (a
 *    replay), adding nothing, for a day; with another body, refused. So a client that lost the
 *    answer of an add without an id can retry without adding the pet twice.
 * Exactly one write in the usual case (one transaction when the pet has tags to index).
 */
export const makeAddPet =
  ({ pets, ids, now = Date.now }: AddPetDependencies) =>
  async (command: AddPetCommand, addKey?: AddPetKey): Promise<AddedPet> => {
    assertIndexableTags(command);
    const key =
      addKey === undefined
        ? undefined
        : { ...addKey, request: command, expiresAt: Math.floor(now() / 1000) + ADD_KEY_TTL_SECONDS };
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const pet = { ...command, id: command.id ?? ids() };
      const inserted = await pets.insert(pet, key);
      if (inserted.keyUsed !== undefined) return replay(inserted.keyUsed, command);
      if (inserted.revision !== undefined) return { pet, revision: inserted.revision, replayed: false };
      if (command.id !== undefined) throw new AlreadyExistsError(`A pet with id ${pet.id} already exists`);
    }
    throw new Error(`Could not draw an unused pet id in ${ID_ATTEMPTS} attempts`);
  };

/** The answer to a key used before: the pet its first add added, if the request is the same. */
function replay(used: KeyUse, command: AddPetCommand): AddedPet {
  // Deep equality ignores the order of members, which neither JSON nor DynamoDB keeps.
  if (!isDeepStrictEqual(used.request, command)) {
    throw new IdempotencyKeyReuseError('This Idempotency-Key was used to add another pet');
  }
  return { ...used.added, replayed: true };
}

/** Reads a pet by its id; {@link NotFoundError} when there is none. */
export const makeGetPet =
  ({ pets }: { readonly pets: Pick<PetRepository, 'find'> }) =>
  async ({ id }: GetPetCommand): Promise<StoredPet> => {
    const stored = await pets.find(id);
    if (!stored) throw new NotFoundError(`No pet with id ${id}`);
    return stored;
  };
