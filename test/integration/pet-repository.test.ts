import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import type { Pet } from '#shared/pets/pet.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';

const pets = createPetRepository({
  client: createDocumentClient(),
  tableName: requireEnv(tables.pets.envVar),
});
/** A random id in the upper half of the safe range: never one the server assigns in this century. */
const uniqueId = () => 2 ** 52 + randomInt(2 ** 47);

describe('pet repository on DynamoDB Local', () => {
  it('finds a pet it inserted, member for member', async () => {
    const pet: Pet = {
      id: uniqueId(),
      name: 'rex',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['a', 'b'],
      tags: [{ id: 2, name: 't' }],
    };
    await expect(pets.insert(pet)).resolves.toBe(true);
    await expect(pets.find(pet.id)).resolves.toEqual(pet);
  });

  it('finds nothing under an id no pet has', async () => {
    await expect(pets.find(uniqueId())).resolves.toBeUndefined();
  });

  it('refuses a different pet under a taken id and keeps the first', async () => {
    const first: Pet = { id: uniqueId(), name: 'first', photoUrls: [] };
    await pets.insert(first);
    await expect(pets.insert({ ...first, name: 'second' })).resolves.toBe(false);
    await expect(pets.find(first.id)).resolves.toEqual(first);
  });

  it('counts the very same pet again as stored, whatever the order of its members', async () => {
    const pet: Pet = { id: uniqueId(), name: 'same', photoUrls: ['p'], status: 'sold' };
    await pets.insert(pet);
    const reordered: Pet = { status: 'sold', photoUrls: ['p'], name: 'same', id: pet.id };
    await expect(pets.insert(reordered)).resolves.toBe(true);
  });
});
