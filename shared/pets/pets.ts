import { AlreadyExistsError, InvalidParameterError, NotFoundError } from '../errors.ts';
import type { Pet, PetInput } from '../schemas/pet.ts';
import { nextPetId } from './pet-id.ts';
import { findPet, insertPet } from './pet-repository.ts';

/**
 * Adds a pet to the catalog.
 * 1. A pet with an id is stored under it, or refused if another pet has that id (never
 *    overwritten); the very same pet again is answered as stored.
 * 2. A pet without one gets a new time-ordered id; a collision, rare by design, draws another.
 * Exactly one write in the usual case.
 */
export async function addPet(input: PetInput): Promise<Pet> {
  if (input.id !== undefined) {
    const pet = { ...input, id: input.id };
    if (!(await insertPet(pet))) throw new AlreadyExistsError(`A pet with id ${pet.id} already exists`);
    return pet;
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const pet = { ...input, id: nextPetId() };
    if (await insertPet(pet)) return pet;
  }
  throw new Error('Could not draw an unused pet id in 3 attempts');
}

/** Reads a pet by the id given in the path; the id must be an integer JavaScript carries exactly. */
export async function getPet(rawId: string | undefined): Promise<Pet> {
  const id = parsePetId(rawId);
  const pet = await findPet(id);
  if (!pet) throw new NotFoundError(`No pet with id ${id}`);
  return pet;
}

/** Parses a path id: a decimal integer within ±(2^53 − 1). */
export function parsePetId(rawId: string | undefined): number {
  const id = Number(rawId);
  if (rawId === undefined || !/^-?\d{1,16}$/.test(rawId) || !Number.isSafeInteger(id)) {
    throw new InvalidParameterError(
      `petId must be an integer between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`,
    );
  }
  return id;
}
