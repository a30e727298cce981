import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAddPetHandler as createAddPet } from '#functions/add-pet/handler.ts';
import { createDeletePetHandler as createDeletePet } from '#functions/delete-pet/handler.ts';
import { createGetPetHandler as createGetPet } from '#functions/get-pet/handler.ts';
import { createUpdatePetHandler as createUpdatePet } from '#functions/update-pet/handler.ts';
import type { ProxiedRequest } from '#infra/local/dynamodb-faults.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { invoke } from '../support/events.ts';
import { mentions, proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';
import { petEvent, petsEvent, uniquePetId } from '../support/pets.ts';

const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
const addPet = createAddPet({ client });
const getPet = createGetPet({ client });
const updatePet = createUpdatePet({ client });
const deletePet = createDeletePet({ client });
/** The same function past the proxy: another client's change, which no fault touches. */
const directUpdate = createUpdatePet({ client: createDocumentClient() });

const add = (body: unknown) => invoke(addPet, petsEvent('POST', { body }));
const read = (id: number) => invoke(getPet, petEvent('GET', id));
const update = (handler: typeof updatePet, body: unknown, ifMatch?: string) =>
  invoke(handler, petsEvent('PUT', { body, ...(ifMatch ? { headers: { 'if-match': ifMatch } } : {}) }));

/** The requests that write pet `id`: those naming it, but its reads (which are all strongly consistent). */
const writeOf = (id: number) => (request: ProxiedRequest) =>
  mentions(String(id))(request) && !request.body.includes('ConsistentRead');

/**
 * The next write naming pet `id` is applied; before its answer is lost, another client changes the
 * pet (past the proxy), so the retry finds that change stored, not its own write.
 */
function loseNextWriteAfterAnotherChange(id: number, change: () => Promise<{ statusCode: number }>) {
  const changed = Promise.withResolvers<void>();
  proxy.inject(
    {
      kind: 'lose-response',
      until: changed.promise,
      answered: () =>
        void change().then((answer) => {
          expect(answer.statusCode).toBe(200);
          changed.resolve();
        }, changed.reject),
    },
    { when: writeOf(id), times: 1 },
  );
}

const stored = (id: number) => storedItem(process.env.PETS_TABLE_NAME, { id });

/** The ids of the pets that the writes naming `name` asked DynamoDB to store. */
const putIds = (name: string) =>
  proxy.requests('TransactWriteItems', mentions(name)).map((r) => {
    const { TransactItems } = JSON.parse(r.body) as {
      TransactItems: { Put: { Item: { id: { N: string } } } }[];
    };
    return Number(TransactItems[0]?.Put.Item.id.N);
  });

describe('add pet under faults beneath the SDK', () => {
  it('answers 200, not 409, when its put was applied but the answer was lost', async () => {
    const pet = { id: uniquePetId(), name: 'lost-answer', photoUrls: ['p'], tags: [{ id: 1, name: 't' }] };
    proxy.inject(
      { kind: 'lose-response' },
      { operation: 'TransactWriteItems', when: mentions(String(pet.id)), times: 1 },
    );
    const response = await add(pet);
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual(pet);
    expect(proxy.requests('TransactWriteItems', mentions(String(pet.id))).length).toBeGreaterThan(1);
    const item = await stored(pet.id);
    expect(item).toMatchObject(pet);
    // The ETag answered is the revision stored.
    expect(response.headers?.etag).toBe(`"${item?.revision}"`);
  });

  it('stores one pet, not a second copy under a new id, when a server-assigned id put lost its answer', async () => {
    const name = `assigned-${randomInt(2 ** 47)}`;
    proxy.inject(
      { kind: 'lose-response' },
      { operation: 'TransactWriteItems', when: mentions(name), times: 1 },
    );
    const response = await add({ name, photoUrls: [] });
    expect(response.statusCode).toBe(200);
    expect(putIds(name).length).toBeGreaterThan(1);
    expect(new Set(putIds(name))).toEqual(new Set([response.json.id]));
  });

  it('still answers 409 when the id holds a different pet', async () => {
    const id = uniquePetId();
    expect((await add({ id, name: 'first', photoUrls: [] })).statusCode).toBe(200);
    proxy.inject({ kind: 'lose-response' }, { when: writeOf(id), times: 1 });
    const response = await add({ id, name: 'second', photoUrls: [] });
    expect(response.statusCode).toBe(409);
    expect(await stored(id)).toMatchObject({ name: 'first' });
  });

  it('answers 503 with Retry-After after 3 requests under throttling, storing nothing', async () => {
    const id = uniquePetId();
    proxy.inject({ kind: 'throttle' }, { when: writeOf(id) });
    const response = await add({ id, name: 'throttled', photoUrls: [] });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(response.body).not.toMatch(/exceeds|throughput|Exception/i);
    expect(proxy.requests(undefined, writeOf(id))).toHaveLength(3);
    expect(await stored(id)).toBeUndefined();
  });
});

describe('change and delete pet under faults beneath the SDK', () => {
  it('answers 200 with the pet, not 404, when its delete was applied but the answer was lost', async () => {
    const pet = { id: uniquePetId(), name: 'lost-delete', photoUrls: [] };
    expect((await add(pet)).statusCode).toBe(200);
    proxy.inject({ kind: 'lose-response' }, { when: writeOf(pet.id), times: 1 });
    const response = await invoke(deletePet, petEvent('DELETE', pet.id));
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual(pet);
    expect(await stored(pet.id)).toBeUndefined();
  });

  it('answers 200, not 409, to an add whose answer was lost after another client changed the pet', async () => {
    const pet = { id: uniquePetId(), name: 'added', photoUrls: [] };
    loseNextWriteAfterAnotherChange(pet.id, () => update(directUpdate, { ...pet, name: 'renamed' }));
    const response = await add(pet);
    expect(response.statusCode).toBe(200);
    expect(await stored(pet.id)).toMatchObject({ name: 'renamed' });
  });

  it('answers 200, not 412, to a change whose answer was lost after another client changed the pet, and applies it once', async () => {
    const pet = { id: uniquePetId(), name: 'first', photoUrls: [] };
    const added = await add(pet);
    loseNextWriteAfterAnotherChange(pet.id, () => update(directUpdate, { ...pet, name: 'third' }));
    const response = await update(updatePet, { ...pet, name: 'second' }, String(added.headers?.etag));
    expect(response.statusCode).toBe(200);
    // The other client's change came after this one: it stays, not overwritten by a second try.
    expect(await stored(pet.id)).toMatchObject({ name: 'third' });
  });
});

describe('get pet under faults beneath the SDK', () => {
  it('answers 503 with Retry-After after 3 requests under throttling', async () => {
    const id = uniquePetId();
    proxy.inject({ kind: 'throttle' }, { operation: 'GetItem', when: mentions(String(id)) });
    const response = await read(id);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('GetItem', mentions(String(id)))).toHaveLength(3);
  });

  it('answers 503 with Retry-After, not 500, while DynamoDB answers 500', async () => {
    const id = uniquePetId();
    proxy.inject({ kind: 'server-error' }, { operation: 'GetItem', when: mentions(String(id)) });
    const response = await read(id);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('GetItem', mentions(String(id)))).toHaveLength(3);
  });
});
