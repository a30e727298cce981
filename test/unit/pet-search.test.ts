import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '#shared/errors.ts';
import { ifMatchOf } from '#shared/http/preconditions.ts';
import { makeFindPetsByStatus, makeFindPetsByTags } from '#shared/pets/find-pets.ts';
import type { Pet } from '#shared/pets/pet.ts';
import { decodeCursor, encodeCursor } from '#shared/pets/pet-cursor.ts';
import { STATUS_SHARDS } from '#shared/pets/pet-index.ts';
import { inMemoryPets } from './fakes/in-memory-pets.ts';

const STATUSES = ['available', 'pending', 'sold'] as const;
const TAGS = ['a', 'b', 'c', 'd'];

const petArbitrary = (id: number) =>
  fc
    .record({
      status: fc.option(fc.constantFrom(...STATUSES), { nil: undefined }),
      tags: fc.subarray(TAGS),
    })
    .map(
      ({ status, tags }): Pet => ({
        id,
        name: `pet-${id}`,
        photoUrls: [],
        ...(status === undefined ? {} : { status }),
        tags: tags.map((name) => ({ name })),
      }),
    );

const storeArbitrary = fc
  .uniqueArray(fc.integer({ min: -1000, max: 1000 }), { maxLength: 60 })
  .chain((ids) => fc.tuple(...ids.map(petArbitrary)));

/** Every page of a search, following the cursors to the end. */
async function allPages(
  first: (cursor?: string) => Promise<{ pets: readonly { pet: Pet }[]; next?: string }>,
) {
  const found: Pet[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await first(cursor);
    found.push(...page.pets.map((stored) => stored.pet));
    if (page.next === undefined) return found;
    cursor = page.next;
  }
  throw new Error('the search did not end');
}

const ids = (pets: readonly Pet[]) => pets.map((pet) => pet.id).sort((x, y) => x - y);

describe('find pets (use cases, over the indexes in memory)', () => {
  it('by status: the pages, to the end, are exactly the pets with the status, each once, none over limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        storeArbitrary,
        fc.constantFrom(...STATUSES),
        fc.integer({ min: 1, max: 7 }),
        async (pets, status, limit) => {
          const { index } = inMemoryPets(pets);
          const find = makeFindPetsByStatus({ index });
          const found = await allPages(async (cursor) => {
            const page = await find({
              statuses: [status],
              limit,
              ...(cursor === undefined ? {} : { cursor }),
            });
            expect(page.pets.length).toBeLessThanOrEqual(limit);
            return page;
          });
          expect(ids(found)).toEqual(ids(pets.filter((pet) => pet.status === status)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("by several statuses: the pages, to the end, are exactly the pets with any of them, each once, each page of at most a status's Queries", async () => {
    await fc.assert(
      fc.asyncProperty(
        storeArbitrary,
        fc.array(fc.constantFrom(...STATUSES), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 7 }),
        async (pets, statuses, limit) => {
          const { index } = inMemoryPets(pets);
          let queries = 0;
          const counting = {
            ...index,
            statusIds: (...args: Parameters<typeof index.statusIds>) => {
              queries++;
              return index.statusIds(...args);
            },
          };
          const find = makeFindPetsByStatus({ index: counting });
          const found = await allPages(async (cursor) => {
            queries = 0;
            const page = await find({ statuses, limit, ...(cursor === undefined ? {} : { cursor }) });
            expect(page.pets.length).toBeLessThanOrEqual(limit);
            expect(queries).toBeLessThanOrEqual(STATUS_SHARDS);
            return page;
          });
          expect(new Set(found.map((pet) => pet.id)).size, 'each pet once').toBe(found.length);
          const wanted = new Set<string>(statuses);
          expect(ids(found)).toEqual(
            ids(pets.filter((pet) => pet.status !== undefined && wanted.has(pet.status))),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('by status: a cursor binds the set of statuses, not their order or repeats; one status keeps the cursors given before', async () => {
    const pets = Array.from(
      { length: 60 },
      (_, i): Pet => ({ id: i, name: 'p', photoUrls: [], status: STATUSES[i % 3] as Pet['status'] }),
    );
    const find = makeFindPetsByStatus({ index: inMemoryPets(pets).index });
    const { next } = await find({ statuses: ['sold', 'pending'], limit: 5 });
    const cursor = next as string;
    expect((await find({ statuses: ['pending', 'sold', 'sold'], limit: 5, cursor })).pets.length).toBe(5);
    await expect(find({ statuses: ['sold'], limit: 5, cursor })).rejects.toBeInstanceOf(
      InvalidParameterError,
    );
    await expect(find({ statuses: STATUSES, limit: 5, cursor })).rejects.toBeInstanceOf(
      InvalidParameterError,
    );
    // The search of one status is named as it was when a status was all a search could name.
    const before = encodeCursor('status:sold', { part: 0, after: 2 });
    const page = await find({ statuses: ['sold'], limit: 100, cursor: before });
    expect(page.pets.map(({ pet }) => pet.status)).toEqual(page.pets.map(() => 'sold'));
  });

  it('by tags: the pages, to the end, are exactly the pets carrying any of the tags, each once', async () => {
    await fc.assert(
      fc.asyncProperty(
        storeArbitrary,
        fc.array(fc.constantFrom(...TAGS, 'z'), { maxLength: 5 }),
        fc.integer({ min: 1, max: 7 }),
        async (pets, tags, limit) => {
          const { index } = inMemoryPets(pets);
          const find = makeFindPetsByTags({ index });
          const found = await allPages(async (cursor) => {
            const page = await find({ tags, limit, ...(cursor === undefined ? {} : { cursor }) });
            expect(page.pets.length).toBeLessThanOrEqual(limit);
            return page;
          });
          const expected = pets.filter((pet) => pet.tags?.some((tag) => tags.includes(tag.name as string)));
          expect(ids(found)).toEqual(ids(expected));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('with a bound on the bytes of a page: the pages still cover the search exactly, each within the bound or of one pet', async () => {
    await fc.assert(
      fc.asyncProperty(
        storeArbitrary,
        fc.array(fc.constantFrom(...TAGS, 'z'), { maxLength: 5 }),
        fc.constantFrom(...STATUSES),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 12 }),
        async (pets, tags, status, limit, maxBytes) => {
          const { index } = inMemoryPets(pets);
          // A pet's size, 1 to 5 "bytes" by its id: pages end at different places than `limit` says.
          const bytesOf = ({ pet }: { pet: Pet }) => 1 + (Math.abs(pet.id) % 5);
          const bound = { bytesOf, maxBytes };
          const check = <P extends { pets: readonly { pet: Pet }[] }>(page: P): P => {
            expect(page.pets.length).toBeLessThanOrEqual(limit);
            const bytes = page.pets.reduce((sum, stored) => sum + bytesOf(stored), 0);
            if (page.pets.length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes);
            return page;
          };
          const byTags = makeFindPetsByTags({ index, bound });
          const byStatus = makeFindPetsByStatus({ index, bound });
          const tagged = await allPages(async (cursor) =>
            check(await byTags({ tags, limit, ...(cursor === undefined ? {} : { cursor }) })),
          );
          expect(ids(tagged)).toEqual(
            ids(pets.filter((pet) => pet.tags?.some((tag) => tags.includes(tag.name as string)))),
          );
          // A status page ends short only where the bound made it: the next page's first pet would
          // have taken it past (the tags' pages may also be short of a pet found under two tags).
          let cut: { bytes: number } | undefined;
          const withStatus = await allPages(async (cursor) => {
            const page = check(
              await byStatus({ statuses: [status], limit, ...(cursor === undefined ? {} : { cursor }) }),
            );
            const [first] = page.pets;
            if (cut !== undefined && first !== undefined)
              expect(cut.bytes + bytesOf(first)).toBeGreaterThan(maxBytes);
            const bytes = page.pets.reduce((sum, stored) => sum + bytesOf(stored), 0);
            cut = page.next !== undefined && page.pets.length < limit ? { bytes } : undefined;
            return page;
          });
          expect(ids(withStatus)).toEqual(ids(pets.filter((pet) => pet.status === status)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads at most limit index items per page in all, and asks no Query for none', async () => {
    const pets = Array.from(
      { length: 300 },
      (_, i): Pet => ({ id: i, name: 'p', photoUrls: [], status: 'sold' }),
    );
    const { index } = inMemoryPets(pets);
    let read = 0;
    const counting = {
      ...index,
      statusIds: async (...args: Parameters<typeof index.statusIds>) => {
        expect(args[3]).toBeGreaterThan(0);
        const page = await index.statusIds(...args);
        read += page.ids.length;
        return page;
      },
    };
    const find = makeFindPetsByStatus({ index: counting });
    let cursor: string | undefined;
    do {
      read = 0;
      const page = await find({ statuses: ['sold'], limit: 20, ...(cursor === undefined ? {} : { cursor }) });
      expect(read).toBeLessThanOrEqual(20);
      cursor = page.next;
    } while (cursor !== undefined);
  });

  it('refuses a cursor of another search, or edited, with InvalidParameterError', async () => {
    const pets = Array.from(
      { length: 50 },
      (_, i): Pet => ({ id: i, name: 'p', photoUrls: [], status: 'sold' }),
    );
    const { index } = inMemoryPets(pets);
    const find = makeFindPetsByStatus({ index });
    const { next } = await find({ statuses: ['sold'], limit: 5 });
    expect(next).toEqual(expect.any(String));
    const cursor = next as string;
    await expect(find({ statuses: ['pending'], limit: 5, cursor })).rejects.toBeInstanceOf(
      InvalidParameterError,
    );
    const edited = Buffer.from(
      Buffer.from(cursor, 'base64url')
        .toString()
        .replace(/^\[(\d+),(\d+)/, (_, part, after) => `[${part},${Number(after) + 1}`),
    ).toString('base64url');
    expect(edited).not.toBe(cursor);
    await expect(find({ statuses: ['sold'], limit: 5, cursor: edited })).rejects.toBeInstanceOf(
      InvalidParameterError,
    );
    await expect(find({ statuses: ['sold'], limit: 5, cursor: `${cursor}A` })).rejects.toBeInstanceOf(
      InvalidParameterError,
    );
  });
});

describe('pet cursors', () => {
  it('give back the position they were made of, for the same search only', () => {
    fc.assert(
      fc.property(fc.nat(7), fc.option(fc.maxSafeInteger(), { nil: undefined }), (part, after) => {
        const position = after === undefined ? { part } : { part, after };
        const cursor = encodeCursor('status:sold', position);
        expect(decodeCursor('status:sold', cursor, 8)).toEqual(position);
        expect(() => decodeCursor('status:pending', cursor, 8)).toThrow(InvalidParameterError);
      }),
    );
  });

  it('refuse a part past the search parts', () => {
    expect(() => decodeCursor('s', encodeCursor('s', { part: 8 }), 8)).toThrow(InvalidParameterError);
  });
});

describe('If-Match', () => {
  it.each([
    [['*'], 'any'],
    [['"abc"'], ['abc']],
    [['"a", W/"b" ,"c"'], ['a', 'c']],
    [
      ['"a"', '"b"'],
      ['a', 'b'],
    ],
    [['W/"a"'], []],
    [[], undefined],
  ])('reads %j as %j', (values, expected) => {
    expect(ifMatchOf(values)).toEqual(expected);
  });

  it.each([['abc'], ['"a" "b"'], ['"a'], [''], ['*, "a"'], [`"${'x'.repeat(2000)}"`]])(
    'refuses %j',
    (value) => {
      expect(() => ifMatchOf([value])).toThrow(InvalidParameterError);
    },
  );
});
