import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAddPetHandler } from '#functions/add-pet/handler.ts';
import { createGetPetHandler } from '#functions/get-pet/handler.ts';
import { createUpdatePetHandler } from '#functions/update-pet/handler.ts';
import { keyEntryId } from '#shared/pets/pet-index.ts';
import { idempotencyKeyHeaders, invoke, uniqueSub } from '../support/events.ts';
import { proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';
import { petEvent, petsEvent, uniquePetId } from '../support/pets.ts';

// addPet with an Idempotency-Key, through the real function, on DynamoDB Local behind the conflict
// proxy: a pet without an id gets one drawn by the server, so without a key a client that lost
// the answer and retried added the pet twice.
const proxy = await startFaultProxy({ conflicts: true });
const client = proxiedClient(proxy);
const addPet = createAddPetHandler({ client });
const getPet = createGetPetHandler({ client });
const updatePet = createUpdatePetHandler({ client });

const add = (sub: string, body: unknown, key?: string | string[]) =>
  invoke(
    addPet,
    petsEvent('POST', {
      sub,
      body,
      ...idempotencyKeyHeaders(key),
    }),
  );
const read = (id: number) => invoke(getPet, petEvent('GET', id));
const petNamed = (name: string) => ({
  name,
  photoUrls: ['p'],
  tags: [{ name: 'keyed' }],
  status: 'available',
});

describe('POST /api/v3/pet with an Idempotency-Key', () => {
  it('adds a pet without an id once: the same key and body again answers the same pet and ETag, marked replayed', async () => {
    const sub = uniqueSub();
    const key = randomUUID();
    const body = petNamed(`once-${randomInt(2 ** 47)}`);
    const first = await add(sub, body, key);
    expect(first.statusCode).toBe(200);
    expect(first.headers?.['idempotent-replayed']).toBeUndefined();
    // The same body with its members in another order is the same request.
    const again = await add(
      sub,
      { status: body.status, tags: body.tags, photoUrls: body.photoUrls, name: body.name },
      `"${key}"`,
    );
    expect(again.statusCode).toBe(200);
    expect(again.headers?.['idempotent-replayed']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.headers?.etag).toBe(first.headers?.etag);
    expect(typeof first.json.id).toBe('number');
    expect((await read(first.json.id)).json).toEqual(first.json);
  });

  it('answers the pet as that add added it, with its ETag then, after the pet was changed', async () => {
    const sub = uniqueSub();
    const key = randomUUID();
    const first = await add(sub, petNamed('before'), key);
    const changed = await invoke(updatePet, petsEvent('PUT', { body: { ...first.json, name: 'after' } }));
    expect(changed.statusCode).toBe(200);
    const again = await add(sub, petNamed('before'), key);
    expect(again.json).toEqual(first.json);
    expect(again.headers?.etag).toBe(first.headers?.etag);
    expect((await read(first.json.id)).json.name).toBe('after');
  });

  it('keeps the key of an add that found the very same pet already stored: after a change, its retry answers the pet as it answered it then', async () => {
    const sub = uniqueSub();
    const key = randomUUID();
    const body = { ...petNamed('before'), id: uniquePetId() };
    expect((await add(sub, body)).statusCode).toBe(200);
    const first = await add(sub, body, key);
    expect(first.statusCode).toBe(200);
    const changed = await invoke(updatePet, petsEvent('PUT', { body: { ...body, name: 'after' } }));
    expect(changed.statusCode).toBe(200);
    const again = await add(sub, body, key);
    expect(again.statusCode).toBe(200);
    expect(again.headers?.['idempotent-replayed']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.headers?.etag).toBe(first.headers?.etag);
    expect((await read(body.id)).json.name).toBe('after');
  });

  it('10 concurrent adds with one key of a pet already stored: every one 200 with the pet, the key recorded once', async () => {
    const sub = uniqueSub();
    const key = randomUUID();
    const body = { ...petNamed(`stored-${randomInt(2 ** 47)}`), id: uniquePetId() };
    const stored = await add(sub, body);
    const answers = await Promise.all(Array.from({ length: 10 }, () => add(sub, body, key)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((answer) => answer.headers?.etag))).toEqual(new Set([stored.headers?.etag]));
    expect(await storedItem(process.env.PETS_TABLE_NAME, { id: keyEntryId(sub, key) })).toMatchObject({
      addedPetId: body.id,
    });
  });

  it('answers 422 idempotency-key-reused for the same key with another pet, and adds nothing', async () => {
    const sub = uniqueSub();
    const key = randomUUID();
    const first = await add(sub, petNamed('rex'), key);
    const other = await add(sub, petNamed('max'), key);
    expect(other.statusCode).toBe(422);
    expect(other.json.type).toMatch(/:idempotency-key-reused$/);
    // With an id of its own, too.
    const withId = await add(sub, { ...petNamed('rex'), id: uniquePetId() }, key);
    expect(withId.statusCode).toBe(422);
    expect((await read(first.json.id)).json.name).toBe('rex');
  });

  it("keeps each caller's keys apart: the same key from two callers adds two pets", async () => {
    const key = randomUUID();
    const a = await add(uniqueSub('a'), petNamed('rex'), key);
    const b = await add(uniqueSub('b'), petNamed('rex'), key);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(b.json.id).not.toBe(a.json.id);
    expect(b.headers?.['idempotent-replayed']).toBeUndefined();
  });

  it('answers 401 to a keyed add that came with no caller, adding nothing and recording no key', async () => {
    const key = randomUUID();
    const body = { ...petNamed('nobody'), id: uniquePetId() };
    const answer = await invoke(
      addPet,
      petsEvent('POST', { sub: null, body, headers: { 'Idempotency-Key': key } }),
    );
    expect(answer.statusCode).toBe(401);
    expect((await read(body.id)).statusCode).toBe(404);
    expect(await storedItem(process.env.PETS_TABLE_NAME, { id: keyEntryId('', key) })).toBeUndefined();
  });

  it('20 concurrent adds with one key: every one 200 with the one pet (none a 503 of our own contention)', async () => {
    const sub = uniqueSub();
    const key = randomUUID();
    const body = petNamed(`racing-${randomInt(2 ** 47)}`);
    const answers = await Promise.all(Array.from({ length: 20 }, () => add(sub, body, key)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(20).fill(200));
    const ids = new Set(answers.map((answer) => answer.json.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((answer) => answer.headers?.['idempotent-replayed'] === undefined)).toHaveLength(1);
    const [id] = ids;
    expect(await storedItem(process.env.PETS_TABLE_NAME, { id: keyEntryId(sub, key) })).toMatchObject({
      addedPetId: id,
    });
  });

  it('answers 400 for a key sent twice or malformed, and adds nothing', async () => {
    const sub = uniqueSub();
    for (const key of [['k1', 'k2'], 'k1, k2', '"a"b"']) {
      const id = uniquePetId();
      const answer = await add(sub, { ...petNamed('refused'), id }, key);
      expect(answer.statusCode).toBe(400);
      expect(answer.json.detail).toContain('Idempotency-Key');
      expect((await read(id)).statusCode).toBe(404);
    }
  });
});
