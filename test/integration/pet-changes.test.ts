import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handler as addPet } from '#functions/add-pet/handler.ts';
import { createDeletePetHandler } from '#functions/delete-pet/handler.ts';
import { createGetPetHandler } from '#functions/get-pet/handler.ts';
import { createUpdatePetHandler } from '#functions/update-pet/handler.ts';
import { createUpdatePetWithFormHandler } from '#functions/update-pet-with-form/handler.ts';
import { tagEntryId } from '#shared/pets/pet-index.ts';
import { invoke } from '../support/events.ts';
import { proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';
import { petEvent, petsEvent, uniquePetId } from '../support/pets.ts';

/*
 * The pet's changes through their handlers, on DynamoDB Local behind the proxy in conflict mode:
 * concurrent writers of one pet meet DynamoDB's transaction conflicts, as on AWS.
 */
const proxy = await startFaultProxy({ conflicts: true });
const client = proxiedClient(proxy);
const updatePet = createUpdatePetHandler({ client });
const updatePetWithForm = createUpdatePetWithFormHandler({ client });
const deletePet = createDeletePetHandler({ client });
const getPet = createGetPetHandler({ client });

const uniqueTag = (label: string) => `${label}-${randomInt(2 ** 47)}`;
const stored = (id: number) => storedItem(process.env.PETS_TABLE_NAME, { id });

const add = (body: unknown) => invoke(addPet, petsEvent('POST', { body }));
const put = (body: unknown, headers: Record<string, string> = {}) =>
  invoke(updatePet, petsEvent('PUT', { body, headers }));
const form = (id: number | string, query: string, headers: Record<string, string> = {}) =>
  invoke(updatePetWithForm, petEvent('POST', id, { query, headers }));
const formBody = (
  id: number,
  rawBody: string,
  contentType = 'application/x-www-form-urlencoded',
  query?: string,
) =>
  invoke(
    updatePetWithForm,
    petEvent('POST', id, {
      rawBody,
      headers: { 'Content-Type': contentType },
      ...(query === undefined ? {} : { query }),
    }),
  );
const remove = (id: number | string, headers: Record<string, string> = {}) =>
  invoke(deletePet, petEvent('DELETE', id, { headers }));
const read = (id: number) => invoke(getPet, petEvent('GET', id));

describe('PUT /api/v3/pet', () => {
  it('replaces the pet, answers it with a new ETag, and GET shows the same', async () => {
    const id = uniquePetId();
    const added = await add({ id, name: 'rex', photoUrls: [], status: 'available' });
    const replaced = await put({ id, name: 'max', photoUrls: ['p'], status: 'sold' });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json).toEqual({ id, name: 'max', photoUrls: ['p'], status: 'sold' });
    expect(replaced.headers?.etag).toMatch(/^"[\w-]+"$/);
    expect(replaced.headers?.etag).not.toBe(added.headers?.etag);
    const found = await read(id);
    expect(found.json).toEqual(replaced.json);
    expect(found.headers?.etag).toBe(replaced.headers?.etag);
  });

  it('answers 404 for a pet that does not exist, and stores nothing', async () => {
    const id = uniquePetId();
    expect((await put({ id, name: 'ghost', photoUrls: [] })).statusCode).toBe(404);
    expect(await stored(id)).toBeUndefined();
  });

  it('answers 422 for a body without an id, and 422 for 21 tags, storing nothing', async () => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: [] });
    const withoutId = await put({ name: 'rex', photoUrls: [] });
    expect(withoutId.statusCode).toBe(422);
    expect(withoutId.json.errors).toEqual([{ pointer: '/id', detail: expect.any(String) }]);
    const tags = Array.from({ length: 21 }, (_, i) => ({ name: `t${i}` }));
    const tooMany = await put({ id, name: 'rex', photoUrls: [], tags });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json.errors[0].pointer).toBe('/tags');
    expect(await stored(id)).toMatchObject({ name: 'rex' });
    expect(await stored(id)).not.toHaveProperty('tags');
  });

  it('answers 412 for an ETag the pet no longer has, and keeps the pet', async () => {
    const id = uniquePetId();
    const added = await add({ id, name: 'rex', photoUrls: [] });
    const etag = added.headers?.etag as string;
    expect((await put({ id, name: 'first', photoUrls: [] }, { 'If-Match': etag })).statusCode).toBe(200);
    const stale = await put({ id, name: 'second', photoUrls: [] }, { 'If-Match': etag });
    expect(stale.statusCode).toBe(412);
    expect(stale.json).toMatchObject({ status: 412, title: 'Precondition failed' });
    expect(await stored(id)).toMatchObject({ name: 'first' });
  });

  it('answers 400 for an If-Match that is no list of entity-tags, and changes nothing', async () => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: [] });
    const result = await put({ id, name: 'changed', photoUrls: [] }, { 'If-Match': 'not-quoted' });
    expect(result.statusCode).toBe(400);
    expect(await stored(id)).toMatchObject({ name: 'rex' });
  });

  it('20 concurrent PUTs with the same If-Match: exactly one 200, the rest 412, and the winner stored', async () => {
    const id = uniquePetId();
    const tag = uniqueTag('start');
    const added = await add({ id, name: 'rex', photoUrls: [], tags: [{ name: tag }] });
    const etag = added.headers?.etag as string;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        // Half change the tags too: those writes are transactions with the tag entries.
        put(
          { id, name: `writer-${i}`, photoUrls: [], tags: [{ name: i % 2 ? tag : `${tag}-${i}` }] },
          { 'If-Match': etag },
        ),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 412)).toHaveLength(19);
    const winner = answers.find((answer) => answer.statusCode === 200);
    expect(await stored(id)).toMatchObject({
      ...winner?.json,
      revision: JSON.parse(winner?.headers?.etag as string),
    });
    // The winner's tag entries, and no other's.
    const winnerTag = winner?.json.tags[0].name as string;
    expect(await storedItem(process.env.PETS_TABLE_NAME, { id: tagEntryId(id, winnerTag) })).toBeDefined();
    for (let i = 0; i < 20; i += 2) {
      if (`${tag}-${i}` !== winnerTag) {
        expect(
          await storedItem(process.env.PETS_TABLE_NAME, { id: tagEntryId(id, `${tag}-${i}`) }),
        ).toBeUndefined();
      }
    }
  });

  it('20 concurrent PUTs without If-Match: every one 200 (none a 503 of our own contention), one of them stored', async () => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: [], tags: [{ name: uniqueTag('x') }] });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        put({ id, name: `writer-${i}`, photoUrls: [], tags: [{ name: `w${i}` }] }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(20).fill(200));
    const item = await stored(id);
    expect(answers.map((answer) => answer.json.name)).toContain(item?.name);
  }, 60_000);
});

describe('POST /api/v3/pet/{petId} (form)', () => {
  it('sets the name and the status from the query and keeps the rest', async () => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: ['p'], tags: [{ name: 'good' }], status: 'available' });
    const result = await form(id, 'name=max&status=sold');
    expect(result.statusCode).toBe(200);
    expect(result.json).toEqual({
      id,
      name: 'max',
      photoUrls: ['p'],
      tags: [{ name: 'good' }],
      status: 'sold',
    });
    expect(await stored(id)).toMatchObject({
      name: 'max',
      status: 'sold',
      statusShard: expect.stringMatching(/^sold#\d$/),
    });
  });

  it.each([
    ['status=lost', 'status'],
    ['name=', 'name'],
    [`name=${'n'.repeat(201)}`, 'name'],
    // What the schema refuses in a body's name, the query's name may not bring in either.
    ['name=%1B%5B31mred', 'name'],
    ['name=max%E2%80%AEgpj', 'name'],
    ['name=max&name=rex', 'name'],
    ['status=sold&status=pending', 'status'],
  ])('answers 400 for %s, and changes nothing', async (query, named) => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: [], status: 'available' });
    const result = await form(id, query);
    expect(result.statusCode).toBe(400);
    expect(result.json.detail).toContain(named);
    expect(await stored(id)).toMatchObject({ name: 'rex', status: 'available' });
  });

  it.each([
    'application/x-www-form-urlencoded',
    'Application/X-WWW-Form-Urlencoded; charset=UTF-8',
    'application/x-www-form-urlencoded;charset="utf-8"',
  ])(
    'sets the name and the status from a form body sent as %s, decoding + and percent-escapes',
    async (type) => {
      const id = uniquePetId();
      await add({ id, name: 'rex', photoUrls: ['p'], status: 'available' });
      const result = await formBody(id, 'name=Max+%C3%A9l%C3%A8ve+%F0%9F%90%95&status=pending', type);
      expect(result.statusCode).toBe(200);
      expect(result.json).toMatchObject({ id, name: 'Max élève 🐕', status: 'pending' });
      expect(await stored(id)).toMatchObject({ name: 'Max élève 🐕', status: 'pending' });
    },
  );

  it('takes the name from the query and the status from the form, and an empty form as no field', async () => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: [], status: 'available' });
    expect((await formBody(id, 'status=sold', undefined, 'name=max')).json).toMatchObject({
      name: 'max',
      status: 'sold',
    });
    expect((await formBody(id, '')).json).toMatchObject({ name: 'max', status: 'sold' });
  });

  it.each([
    // A body the function would otherwise ignore, answering 200 with nothing changed.
    [415, 'unsupported-media-type', '{"name":"max"}', 'application/json'],
    [415, 'unsupported-media-type', 'name=max', 'application/x-www-form-urlencoded; charset=ISO-8859-1'],
    [415, 'unsupported-media-type', 'name=max', 'text/plain'],
    [413, 'payload-too-large', `name=${'%41'.repeat(1366)}`, undefined],
    [400, 'malformed-body', 'name=50%', undefined],
    [400, 'malformed-body', 'name=%C3', undefined],
    [400, 'malformed-body', 'name=%ED%A0%80', undefined],
    [400, 'invalid-parameter', 'nmae=max', undefined],
    [400, 'invalid-parameter', 'name=max&name=rex', undefined],
    [400, 'invalid-parameter', 'name=', undefined],
    [400, 'invalid-parameter', 'status=lost', undefined],
    [400, 'invalid-parameter', 'name=max%1B%5B31m', undefined],
  ])('answers %i %s for the form %s (%s), and changes nothing', async (status, slug, body, type) => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: [], status: 'available' });
    const result = await formBody(id, body, type);
    expect(result.statusCode).toBe(status);
    expect(result.headers?.['content-type']).toBe('application/problem+json');
    expect(result.json.type).toMatch(new RegExp(`:${slug}$`));
    expect(await stored(id)).toMatchObject({ name: 'rex', status: 'available' });
  });

  it('answers 400 naming a field given both in the query and in the form, and changes nothing', async () => {
    const id = uniquePetId();
    await add({ id, name: 'rex', photoUrls: [], status: 'available' });
    const result = await formBody(id, 'name=max', undefined, 'name=bob');
    expect(result.statusCode).toBe(400);
    expect(result.json.detail).toContain('name');
    expect(await stored(id)).toMatchObject({ name: 'rex', status: 'available' });
  });

  it('answers 412 for a stale If-Match and 404 for no pet', async () => {
    const id = uniquePetId();
    const added = await add({ id, name: 'rex', photoUrls: [] });
    await form(id, 'name=first');
    expect((await form(id, 'name=second', { 'if-match': added.headers?.etag as string })).statusCode).toBe(
      412,
    );
    expect((await form(uniquePetId(), 'name=x')).statusCode).toBe(404);
  });
});

describe('DELETE /api/v3/pet/{petId}', () => {
  it('removes the pet and its tag entries, answering it as it was; then 404', async () => {
    const id = uniquePetId();
    const tag = uniqueTag('bye');
    const added = await add({ id, name: 'rex', photoUrls: [], tags: [{ name: tag }] });
    const removed = await remove(id, { api_key: 'anything', 'If-Match': added.headers?.etag as string });
    expect(removed.statusCode).toBe(200);
    expect(removed.json).toEqual(added.json);
    expect(await stored(id)).toBeUndefined();
    expect(await storedItem(process.env.PETS_TABLE_NAME, { id: tagEntryId(id, tag) })).toBeUndefined();
    expect((await remove(id)).statusCode).toBe(404);
  });

  it('answers 412 for a stale If-Match and keeps the pet', async () => {
    const id = uniquePetId();
    const added = await add({ id, name: 'rex', photoUrls: [] });
    await form(id, 'status=sold');
    expect((await remove(id, { 'If-Match': added.headers?.etag as string })).statusCode).toBe(412);
    expect(await stored(id)).toBeDefined();
  });

  it.each(['9223372036854775808', '9007199254740992', '-9007199254740992', '1e3'])(
    'answers 400 for the petId %s, past what is stored exactly',
    async (petId) => {
      const result = await remove(petId);
      expect(result.statusCode).toBe(400);
      expect(result.json.detail).toContain('petId');
    },
  );
});
