import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAddPetHandler as createAddPet } from '#functions/add-pet/handler.ts';
import { createGetPetHandler as createGetPet } from '#functions/get-pet/handler.ts';
import { apiEvent, invoke } from '../support/events.ts';
import { mentions, proxiedClient, startFaultProxy, storedItem } from '../support/faults.ts';

const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
const addPet = createAddPet({ client });
const getPet = createGetPet({ client });

const write = { method: 'POST', path: '/api/v3/pet', scopes: ['write:pets'] };
const uniqueId = () => 2 ** 52 + randomInt(2 ** 47);
const add = (body: unknown) => invoke(addPet, apiEvent({ ...write, body }));
const read = (id: number) =>
  invoke(
    getPet,
    apiEvent({
      method: 'GET',
      path: `/api/v3/pet/${id}`,
      resource: '/api/v3/pet/{petId}',
      pathParameters: { petId: String(id) },
      scopes: ['read:pets'],
    }),
  );

const stored = (id: number) => storedItem(process.env.PETS_TABLE_NAME, { id });

/** The ids of the pets that PutItem requests naming `name` asked DynamoDB to store. */
const putIds = (name: string) =>
  proxy
    .requests('PutItem', mentions(name))
    .map((r) => Number((JSON.parse(r.body) as { Item: { id: { N: string } } }).Item.id.N));

describe('add pet under faults beneath the SDK', () => {
  it('answers 200, not 409, when its put was applied but the answer was lost', async () => {
    const pet = { id: uniqueId(), name: 'lost-answer', photoUrls: ['p'], tags: [{ id: 1, name: 't' }] };
    // A pet with tags is written with its tag entries in one transaction.
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
    proxy.inject({ kind: 'lose-response' }, { operation: 'PutItem', when: mentions(name), times: 1 });
    const response = await add({ name, photoUrls: [] });
    expect(response.statusCode).toBe(200);
    expect(putIds(name).length).toBeGreaterThan(1);
    expect(new Set(putIds(name))).toEqual(new Set([response.json.id]));
  });

  it('still answers 409 when the id holds a different pet', async () => {
    const id = uniqueId();
    expect((await add({ id, name: 'first', photoUrls: [] })).statusCode).toBe(200);
    proxy.inject({ kind: 'lose-response' }, { operation: 'PutItem', when: mentions(String(id)), times: 1 });
    const response = await add({ id, name: 'second', photoUrls: [] });
    expect(response.statusCode).toBe(409);
    expect(await stored(id)).toMatchObject({ name: 'first' });
  });

  it('answers 503 with Retry-After after 3 requests under throttling, storing nothing', async () => {
    const id = uniqueId();
    proxy.inject({ kind: 'throttle' }, { operation: 'PutItem', when: mentions(String(id)) });
    const response = await add({ id, name: 'throttled', photoUrls: [] });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(response.body).not.toMatch(/exceeds|throughput|Exception/i);
    expect(proxy.requests('PutItem', mentions(String(id)))).toHaveLength(3);
    expect(await stored(id)).toBeUndefined();
  });
});

describe('get pet under faults beneath the SDK', () => {
  it('answers 503 with Retry-After after 3 requests under throttling', async () => {
    const id = uniqueId();
    proxy.inject({ kind: 'throttle' }, { operation: 'GetItem', when: mentions(String(id)) });
    const response = await read(id);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('GetItem', mentions(String(id)))).toHaveLength(3);
  });

  it('answers 503 with Retry-After, not 500, while DynamoDB answers 500', async () => {
    const id = uniqueId();
    proxy.inject({ kind: 'server-error' }, { operation: 'GetItem', when: mentions(String(id)) });
    const response = await read(id);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('GetItem', mentions(String(id)))).toHaveLength(3);
  });
});
