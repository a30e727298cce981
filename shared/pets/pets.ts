import { AlreadyExistsError, NotFoundError } from '../errors.ts';
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

/** Where pets are kept (`pet-repository.ts` on DynamoDB; an in-memory map in the unit tests). */
export interface PetRepository {
  /** Stores a new pet and its index entries; its revision, or `undefined` when another pet has its id. */
  insert(pet: Pet): Promise<string | undefined>;
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

/** The pet to read, by an id the edge already parsed. */
export interface GetPetCommand {
  readonly id: number;
}

export interface AddPetDependencies {
  readonly pets: PetRepository;
  /** Draws a new pet id (`createPetIds()`). */
  readonly ids: () => number;
}

/** How many fresh ids a new pet may draw before the use case gives up. */
const ID_ATTEMPTS = 3;

/**
 * Adds a pet to the catalog.
 * 1. A pet with an id is stored under it, or refused if another pet has that id (never
 *    overwritten); the very same pet again is answered as stored.
 * 2. A pet without one gets a new time-ordered id; a collision, rare by design, draws another.
 * Exactly one write in the usual case (one transaction when the pet has tags to index).
 */
export const makeAddPet =
  ({ pets, ids }: AddPetDependencies) =>
  async (command: AddPetCommand): Promise<StoredPet> => {
    assertIndexableTags(command);
    if (command.id !== undefined) {
      const pet = { ...command, id: command.id };
      const revision = await pets.insert(pet);
      if (revision === undefined) throw new AlreadyExistsError(`A pet with id ${pet.id} already exists`);
      return { pet, revision };
    }
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const pet = { ...command, id: ids() };
      const revision = await pets.insert(pet);
      if (revision !== undefined) return { pet, revision };
    }
    throw new Error(`Could not draw an unused pet id in ${ID_ATTEMPTS} attempts`);
  };

/** Reads a pet by its id; {@link NotFoundError} when there is none. */
export const makeGetPet =
  ({ pets }: { readonly pets: Pick<PetRepository, 'find'> }) =>
  async ({ id }: GetPetCommand): Promise<StoredPet> => {
    const stored = await pets.find(id);
    if (!stored) throw new NotFoundError(`No pet with id ${id}`);
    return stored;
  };
