import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, NotFoundError } from '#shared/errors.ts';
import type { Pet } from '#shared/pets/pet.ts';
import { createPetIds } from '#shared/pets/pet-id.ts';
import { makeAddPet, makeGetPet } from '#shared/pets/pets.ts';
import { inMemoryPets as inMemory } from './fakes/in-memory-pets.ts';

const inMemoryPets = (initial: readonly Pet[] = []) => {
  const { repository, stored } = inMemory(initial);
  return { ...repository, stored };
};

/** Ids drawn in turn from `drawn`; fails the test if the use case draws more. */
function idsFrom(...drawn: number[]): () => number {
  return () => {
    const id = drawn.shift();
    if (id === undefined) throw new Error('drew more ids than the test expected');
    return id;
  };
}

describe('add pet (use case)', () => {
  it('stores a pet under the id it names', async () => {
    const pets = inMemoryPets();
    const { pet, revision } = await makeAddPet({ pets, ids: idsFrom() })({
      id: 7,
      name: 'rex',
      photoUrls: [],
    });
    expect(pet).toEqual({ id: 7, name: 'rex', photoUrls: [] });
    expect(pets.stored.get(7)).toEqual({ pet, revision });
  });

  it('refuses an id another pet has, and keeps that pet', async () => {
    const first: Pet = { id: 7, name: 'first', photoUrls: [] };
    const pets = inMemoryPets([first]);
    const add = makeAddPet({ pets, ids: idsFrom() });
    await expect(add({ id: 7, name: 'second', photoUrls: [] })).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(pets.stored.get(7)?.pet).toBe(first);
  });

  it('gives a pet without an id a drawn one, drawing again past a taken id', async () => {
    const pets = inMemoryPets([{ id: 1, name: 'taken', photoUrls: [] }]);
    const { pet } = await makeAddPet({ pets, ids: idsFrom(1, 2) })({ name: 'rex', photoUrls: [] });
    expect(pet.id).toBe(2);
    expect(pets.stored.get(2)?.pet).toEqual(pet);
  });

  it('gives up after three taken ids, storing nothing', async () => {
    const pets = inMemoryPets([1, 2, 3].map((id) => ({ id, name: 'taken', photoUrls: [] })));
    await expect(makeAddPet({ pets, ids: idsFrom(1, 2, 3) })({ name: 'rex', photoUrls: [] })).rejects.toThrow(
      /3 attempts/,
    );
    expect(pets.stored.size).toBe(3);
  });
});

describe('get pet (use case)', () => {
  it('answers the stored pet', async () => {
    const pet: Pet = { id: 9, name: 'rex', photoUrls: ['p'] };
    await expect(makeGetPet({ pets: inMemoryPets([pet]) })({ id: 9 })).resolves.toMatchObject({ pet });
  });

  it('answers NotFoundError for an id no pet has', async () => {
    await expect(makeGetPet({ pets: inMemoryPets() })({ id: 9 })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('pet ids', () => {
  const epoch = Date.UTC(2025, 0, 1);

  it('are positive, time-ordered safe integers, distinct within a millisecond', () => {
    let now = epoch + 1_000;
    const next = createPetIds({ now: () => now, random: () => 0.5 });
    const sameMillisecond = [next(), next(), next()];
    now += 1;
    const later = next();
    expect(new Set(sameMillisecond).size).toBe(3);
    for (const id of [...sameMillisecond, later]) {
      expect(Number.isSafeInteger(id) && id > 0).toBe(true);
      expect(id).toBeLessThan(later + 1);
    }
    expect(Math.floor(later / 4096)).toBe(1_001);
  });

  it('stay below 2^53 until 2094', () => {
    const next = createPetIds({ now: () => Date.UTC(2094, 0, 1), random: () => 0.999 });
    expect(Number.isSafeInteger(next())).toBe(true);
  });
});
