import { NotFoundError, PreconditionFailedError, TemporarilyUnavailableError } from '../errors.ts';
import { ANSWER_MARGIN_MS, requestDeadline } from '../request-deadline.ts';
import type { Pet } from './pet.ts';
import { assertIndexableTags } from './pet-index.ts';
import type { PetRepository, StoredPet } from './pets.ts';

/**
 * What a change demands of the stored pet's revision (HTTP `If-Match`, turned into revisions at the
 * edge): `any` (`*`) that a pet exists; a list, that its revision is one of them; none, nothing.
 */
export type Expected = 'any' | readonly string[] | undefined;

/** `PUT /pet`: the pet replacing the stored one with its id. */
export interface UpdatePetCommand {
  readonly pet: Pet;
  readonly expected?: Expected;
}

/** `POST /pet/{petId}`: a new name and/or status for a stored pet. */
export interface UpdatePetWithFormCommand {
  readonly id: number;
  readonly name?: string;
  readonly status?: NonNullable<Pet['status']>;
  readonly expected?: Expected;
}

/** `DELETE /pet/{petId}`. */
export interface DeletePetCommand {
  readonly id: number;
  readonly expected?: Expected;
}

/**
 * How long to wait before reading a pet again after a write of it that lost to another: full
 * jitter, growing to a cap wide enough that 20 writers of one pet spread out rather than meet again.
 */
const BACKOFF_BASE_MS = 5;
const BACKOFF_MAX_MS = 400;
/** A bound on reads and writes of one change besides the request's deadline, which usually comes first. */
const MAX_ROUNDS = 200;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the stored pet's `revision` satisfies what the caller expects of it. */
export function holds(expected: Expected, revision: string): boolean {
  if (expected === undefined || expected === 'any') return true;
  return expected.includes(revision);
}

/**
 * The one loop of every change of a stored pet: read it, check the caller's precondition against
 * what was read, write conditionally on the revision read, and, when another write got there
 * first, read again. The read after a lost write decides: the pet gone is a 404, a revision the
 * caller did not name a 412, and a caller who named none (or `*`) writes again on the pet as it
 * now is, so that concurrent writers without `If-Match` all succeed, the last one winning, as on
 * the Petstore, and none of them gets a 503 for our own contention.
 */
export async function changePet<T>(
  pets: PetRepository,
  id: number,
  expected: Expected,
  write: (current: StoredPet) => Promise<T | undefined>,
  /** The pet as the caller just read it, for the first round (an upload reads it before storing its image). */
  read?: StoredPet,
): Promise<T> {
  const deadline = requestDeadline();
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const current = round === 1 && read !== undefined ? read : await pets.find(id);
    if (!current) throw new NotFoundError(`No pet with id ${id}`);
    if (!holds(expected, current.revision)) {
      throw new PreconditionFailedError(
        `The pet with id ${id} has changed since the ETag in If-Match: read it again and retry`,
      );
    }
    const outcome = await write(current);
    if (outcome !== undefined) return outcome;
    const pause = Math.random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** round);
    if (deadline !== undefined && Date.now() + pause > deadline - 2 * ANSWER_MARGIN_MS) break;
    await sleep(pause);
  }
  throw new TemporarilyUnavailableError(`The pet with id ${id} is busy; retry in a moment`, 1);
}

/** Replaces a stored pet; {@link NotFoundError} when there is none, {@link PreconditionFailedError} per `If-Match`. */
export const makeUpdatePet =
  ({ pets }: { readonly pets: PetRepository }) =>
  async ({ pet, expected }: UpdatePetCommand): Promise<StoredPet> => {
    assertIndexableTags(pet);
    return changePet(pets, pet.id, expected, async (current) => {
      const revision = await pets.replace(current, pet);
      return revision === undefined ? undefined : { pet, revision };
    });
  };

/**
 * Sets a stored pet's name and/or status, keeping the rest. Neither given leaves the pet as it is
 * and answers it (the Petstore's form does the same), after the precondition like any change.
 */
export const makeUpdatePetWithForm =
  ({ pets }: { readonly pets: PetRepository }) =>
  ({ id, name, status, expected }: UpdatePetWithFormCommand): Promise<StoredPet> =>
    changePet(pets, id, expected, async (current) => {
      if (name === undefined && status === undefined) return current;
      const pet: Pet = {
        ...current.pet,
        ...(name === undefined ? {} : { name }),
        ...(status === undefined ? {} : { status }),
      };
      const revision = await pets.replace(current, pet);
      return revision === undefined ? undefined : { pet, revision };
    });

/** Deletes a stored pet and answers it as it was; {@link NotFoundError} when there is none. */
export const makeDeletePet =
  ({ pets }: { readonly pets: PetRepository }) =>
  ({ id, expected }: DeletePetCommand): Promise<StoredPet> =>
    changePet(pets, id, expected, async (current) => ((await pets.remove(current)) ? current : undefined));
