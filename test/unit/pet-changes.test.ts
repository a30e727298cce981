import { describe, expect, it } from 'vitest';
import { NotFoundError, PreconditionFailedError } from '#shared/errors.ts';
import type { Pet } from '#shared/pets/pet.ts';
import { makeDeletePet, makeUpdatePet, makeUpdatePetWithForm } from '#shared/pets/pet-changes.ts';
import { inMemoryPets } from './fakes/in-memory-pets.ts';

const rex: Pet = { id: 7, name: 'rex', photoUrls: [], status: 'available', tags: [{ name: 'good' }] };

describe('update pet (use case)', () => {
  it('replaces the stored pet and answers it with a new revision', async () => {
    const { repository, stored } = inMemoryPets([rex]);
    const changed: Pet = { id: 7, name: 'max', photoUrls: ['p'] };
    const answer = await makeUpdatePet({ pets: repository })({ pet: changed });
    expect(answer).toEqual({ pet: changed, revision: 'r2' });
    expect(stored.get(7)).toEqual(answer);
  });

  it('answers NotFoundError for an id no pet has, and stores nothing', async () => {
    const { repository, stored } = inMemoryPets();
    await expect(makeUpdatePet({ pets: repository })({ pet: rex, expected: 'any' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(stored.size).toBe(0);
  });

  it('refuses a revision the pet no longer has with PreconditionFailedError, and keeps the pet', async () => {
    const { repository, stored } = inMemoryPets([rex]);
    const update = makeUpdatePet({ pets: repository });
    await update({ pet: { ...rex, name: 'first' }, expected: ['r1'] });
    await expect(update({ pet: { ...rex, name: 'second' }, expected: ['r1'] })).rejects.toBeInstanceOf(
      PreconditionFailedError,
    );
    expect(stored.get(7)?.pet.name).toBe('first');
  });

  it('takes any of the listed revisions, and never a list without the current one (a weak tag names none)', async () => {
    const { repository } = inMemoryPets([rex]);
    const update = makeUpdatePet({ pets: repository });
    await expect(update({ pet: rex, expected: [] })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(update({ pet: rex, expected: ['r0', 'r1'] })).resolves.toMatchObject({ revision: 'r2' });
  });

  it('with If-Match, answers 412 when another write lands between its read and its write', async () => {
    const { repository, stored, hooks } = inMemoryPets([rex]);
    hooks.beforeWrite = () => {
      hooks.beforeWrite = undefined;
      stored.set(7, { pet: { ...rex, name: 'other' }, revision: 'other' });
    };
    await expect(
      makeUpdatePet({ pets: repository })({ pet: { ...rex, name: 'mine' }, expected: ['r1'] }),
    ).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(stored.get(7)?.pet.name).toBe('other');
  });

  it('without If-Match, writes again on the pet as it now is, and wins (the Petstore overwrites)', async () => {
    const { repository, stored, hooks } = inMemoryPets([rex]);
    hooks.beforeWrite = () => {
      hooks.beforeWrite = undefined;
      stored.set(7, { pet: { ...rex, name: 'other' }, revision: 'other' });
    };
    const answer = await makeUpdatePet({ pets: repository })({ pet: { ...rex, name: 'mine' } });
    expect(answer.pet.name).toBe('mine');
    expect(stored.get(7)).toEqual(answer);
  });
});

describe('update pet with form (use case)', () => {
  it('sets the name and the status, and keeps every other member', async () => {
    const { repository } = inMemoryPets([rex]);
    const answer = await makeUpdatePetWithForm({ pets: repository })({ id: 7, name: 'max', status: 'sold' });
    expect(answer.pet).toEqual({ ...rex, name: 'max', status: 'sold' });
  });

  it('with neither, answers the pet as it is, without writing it', async () => {
    const { repository, stored } = inMemoryPets([rex]);
    await expect(makeUpdatePetWithForm({ pets: repository })({ id: 7 })).resolves.toEqual(stored.get(7));
    expect(stored.get(7)?.revision).toBe('r1');
  });

  it('with neither, still checks If-Match', async () => {
    const { repository } = inMemoryPets([rex]);
    await expect(
      makeUpdatePetWithForm({ pets: repository })({ id: 7, expected: ['r9'] }),
    ).rejects.toBeInstanceOf(PreconditionFailedError);
  });
});

describe('delete pet (use case)', () => {
  it('removes the pet and answers it as it was', async () => {
    const { repository, stored } = inMemoryPets([rex]);
    await expect(makeDeletePet({ pets: repository })({ id: 7, expected: ['r1'] })).resolves.toEqual({
      pet: rex,
      revision: 'r1',
    });
    expect(stored.has(7)).toBe(false);
  });

  it('answers NotFoundError when the pet is gone, and PreconditionFailedError for another revision', async () => {
    const { repository, stored } = inMemoryPets([rex]);
    const remove = makeDeletePet({ pets: repository });
    await expect(remove({ id: 7, expected: ['r0'] })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(stored.has(7)).toBe(true);
    await remove({ id: 7 });
    await expect(remove({ id: 7 })).rejects.toBeInstanceOf(NotFoundError);
  });
});
