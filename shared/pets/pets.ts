import { AlreadyExistsError, NotFoundError } from '../errors.ts';
import type { Pet, PetInput } from './pet.ts';

/** Where pets are kept (`pet-repository.ts` on DynamoDB; an in-memory map in the unit tests). */
export interface PetRepository {
  /** Stores a new pet; `false` when another pet has its id (nothing is overwritten). */
  insert(pet: Pet): Promise<boolean>;
  /** The pet with this id, as stored, or `undefined`. */
  find(id: number): Promise<Pet | undefined>;
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
 * Exactly one write in the usual case.
 */
export const makeAddPet =
  ({ pets, ids }: AddPetDependencies) =>
  async (command: AddPetCommand): Promise<Pet> => {
    if (command.id !== undefined) {
      const pet = { ...command, id: command.id };
      if (!(await pets.insert(pet))) throw new AlreadyExistsError(`A pet with id ${pet.id} already exists`);
      return pet;
    }
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const pet = { ...command, id: ids() };
      if (await pets.insert(pet)) return pet;
    }
    throw new Error(`Could not draw an unused pet id in ${ID_ATTEMPTS} attempts`);
  };

/** Reads a pet by its id; {@link NotFoundError} when there is none. */
export const makeGetPet =
  ({ pets }: { readonly pets: PetRepository }) =>
  async ({ id }: GetPetCommand): Promise<Pet> => {
    const pet = await pets.find(id);
    if (!pet) throw new NotFoundError(`No pet with id ${id}`);
    return pet;
  };
