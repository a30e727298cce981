import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import type { Pet } from '#shared/pets/pet.ts';
import { keyEntryId, statusShardOf, tagEntryId } from '#shared/pets/pet-index.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { createPetIndex } from '#shared/pets/pet-search-repository.ts';
import { storedItem } from '../support/faults.ts';
import { uniquePetId } from '../support/pets.ts';

const tableName = requireEnv(tables.pets.envVar);
const pets = createPetRepository({ client: createDocumentClient(), tableName });
const index = createPetIndex({ client: createDocumentClient(), tableName });
/** A tag name no other test uses. */
const uniqueTag = (label: string) => `${label}-${randomInt(2 ** 47)}`;
const entry = (petId: number, tag: string) => storedItem(tableName, { id: tagEntryId(petId, tag) });

describe('pet repository on DynamoDB Local', () => {
  it('finds a pet it inserted, member for member, with the revision the insert answered', async () => {
    const pet: Pet = {
      id: uniquePetId(),
      name: 'rex',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['a', 'b'],
      tags: [{ id: 2, name: 't' }],
    };
    const { revision } = await pets.insert(pet);
    expect(revision).toEqual(expect.any(String));
    await expect(pets.find(pet.id)).resolves.toEqual({ pet, revision });
  });

  it('finds nothing under an id no pet has', async () => {
    await expect(pets.find(uniquePetId())).resolves.toBeUndefined();
  });

  it('refuses a different pet under a taken id and keeps the first', async () => {
    const first: Pet = { id: uniquePetId(), name: 'first', photoUrls: [] };
    const { revision } = await pets.insert(first);
    await expect(pets.insert({ ...first, name: 'second' })).resolves.toEqual({});
    await expect(pets.find(first.id)).resolves.toEqual({ pet: first, revision });
  });

  it('counts the very same pet again as stored, whatever the order of its members, with its revision', async () => {
    const pet: Pet = { id: uniquePetId(), name: 'same', photoUrls: ['p'], status: 'sold' };
    const { revision } = await pets.insert(pet);
    const reordered: Pet = { status: 'sold', photoUrls: ['p'], name: 'same', id: pet.id };
    await expect(pets.insert(reordered)).resolves.toEqual({ revision });
  });

  it('writes a tag entry per distinct tag name and a status shard with the pet', async () => {
    const [a, b] = [uniqueTag('a'), uniqueTag('b')];
    const pet: Pet = {
      id: uniquePetId(),
      name: 'tagged',
      photoUrls: [],
      status: 'pending',
      tags: [{ name: a }, { id: 3, name: a }, { name: b }, { id: 4 }],
    };
    await pets.insert(pet);
    expect(await storedItem(tableName, { id: pet.id })).toMatchObject({ statusShard: statusShardOf(pet) });
    expect(await entry(pet.id, a)).toMatchObject({ tag: a, petId: pet.id });
    expect(await entry(pet.id, b)).toMatchObject({ tag: b, petId: pet.id });
    await expect(index.tagIds(a, undefined, 10)).resolves.toEqual({ ids: [pet.id], more: false });
  });

  it('replaces a pet at its revision, moving its tag entries, and refuses a stale revision', async () => {
    const [kept, dropped, added] = [uniqueTag('kept'), uniqueTag('dropped'), uniqueTag('added')];
    const pet: Pet = {
      id: uniquePetId(),
      name: 'v1',
      photoUrls: [],
      tags: [{ name: kept }, { name: dropped }],
    };
    const first = { pet, revision: (await pets.insert(pet)).revision as string };
    const changed: Pet = { ...pet, name: 'v2', tags: [{ name: kept }, { name: added }] };
    const second = await pets.replace(first, changed);
    expect(second).toEqual(expect.any(String));
    expect(second).not.toBe(first.revision);
    await expect(pets.find(pet.id)).resolves.toEqual({ pet: changed, revision: second });
    expect(await entry(pet.id, dropped)).toBeUndefined();
    expect(await entry(pet.id, added)).toMatchObject({ tag: added, petId: pet.id });
    expect(await entry(pet.id, kept)).toMatchObject({ tag: kept, petId: pet.id });

    await expect(pets.replace(first, { ...pet, name: 'stale' })).resolves.toBeUndefined();
    await expect(pets.remove(first)).resolves.toBe(false);
    await expect(pets.find(pet.id)).resolves.toEqual({ pet: changed, revision: second });
  });

  it('removes a pet with its tag entries', async () => {
    const tag = uniqueTag('gone');
    const pet: Pet = { id: uniquePetId(), name: 'gone', photoUrls: [], tags: [{ name: tag }] };
    const revision = (await pets.insert(pet)).revision as string;
    await expect(pets.remove({ pet, revision })).resolves.toBe(true);
    await expect(pets.find(pet.id)).resolves.toBeUndefined();
    expect(await entry(pet.id, tag)).toBeUndefined();
  });

  it('changes a pet stored before revisions, once, conditionally on its having none', async () => {
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const pet: Pet = { id: uniquePetId(), name: 'old', photoUrls: [] };
    await createDocumentClient().send(new PutCommand({ TableName: tableName, Item: pet }));
    const legacy = { pet, revision: '0' };
    await expect(pets.find(pet.id)).resolves.toEqual(legacy);
    const revision = await pets.replace(legacy, { ...pet, name: 'new' });
    expect(revision).toEqual(expect.any(String));
    await expect(pets.replace(legacy, { ...pet, name: 'again' })).resolves.toBeUndefined();
  });
});

describe("pet repository: an add's Idempotency-Key record", () => {
  const keyOf = (expiresAt: number, name: string) => ({
    owner: `owner-${randomInt(2 ** 47)}`,
    key: 'k',
    request: { name, photoUrls: [] },
    expiresAt,
  });

  it('is found by the next insert with the key, which writes nothing', async () => {
    const key = keyOf(Math.floor(Date.now() / 1000) + 60, 'first');
    const first = { id: uniquePetId(), name: 'first', photoUrls: [] };
    const { revision } = await pets.insert(first, key);
    const second = { id: uniquePetId(), name: 'second', photoUrls: [] };
    await expect(
      pets.insert(second, { ...key, request: { name: 'second', photoUrls: [] } }),
    ).resolves.toEqual({
      keyUsed: { request: { name: 'first', photoUrls: [] }, added: { pet: first, revision } },
    });
    expect(await storedItem(tableName, { id: second.id })).toBeUndefined();
  });

  it('counts as none once past its expiry, before DynamoDB TTL has deleted it', async () => {
    const expired = keyOf(Math.floor(Date.now() / 1000) - 1, 'first');
    await pets.insert({ id: uniquePetId(), name: 'first', photoUrls: [] }, expired);
    const second = { id: uniquePetId(), name: 'second', photoUrls: [] };
    const inserted = await pets.insert(second, { ...expired, expiresAt: Math.floor(Date.now() / 1000) + 60 });
    expect(inserted.revision).toEqual(expect.any(String));
    expect(await storedItem(tableName, { id: keyEntryId(expired.owner, expired.key) })).toMatchObject({
      addedPetId: second.id,
    });
  });
});
