import { randomInt } from 'node:crypto';
import { GetCommand, type GetCommandOutput, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as addPet } from '#functions/add-pet/handler.ts';
import { handler as getPet } from '#functions/get-pet/handler.ts';
import { apiEvent, invoke } from '../support/events.ts';
import { forward, mockDocumentClients, throttled, timeout } from '../support/faults.ts';

const ddb = mockDocumentClients();

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

async function stored(id: number): Promise<unknown> {
  const { Item } = (await forward(
    new GetCommand({ TableName: process.env.PETS_TABLE_NAME, Key: { id }, ConsistentRead: true }),
  )) as GetCommandOutput;
  return Item;
}

/** Applies the first put, then loses its answer; later puts go through. */
function loseFirstPutAnswer(): number[] {
  const applied: number[] = [];
  let lost = 1;
  ddb.on(PutCommand).callsFake(async (input) => {
    const output = await forward(new PutCommand(input));
    applied.push(input.Item.id);
    if (lost-- > 0) throw timeout();
    return output;
  });
  return applied;
}

describe('add pet under faults', () => {
  it('answers 200, not 409, when its put was applied but the answer was lost', async () => {
    const pet = { id: uniqueId(), name: 'lost-answer', photoUrls: ['p'], tags: [{ id: 1, name: 't' }] };
    loseFirstPutAnswer();
    const response = await add(pet);
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual(pet);
    expect(await stored(pet.id)).toEqual(pet);
  });

  it('stores one pet, not a second copy under a new id, when a server-assigned id put lost its answer', async () => {
    const applied = loseFirstPutAnswer();
    const response = await add({ name: 'assigned', photoUrls: [] });
    expect(response.statusCode).toBe(200);
    expect(new Set(applied)).toEqual(new Set([response.json.id]));
  });

  it('still answers 409 when the id holds a different pet', async () => {
    const id = uniqueId();
    expect((await add({ id, name: 'first', photoUrls: [] })).statusCode).toBe(200);
    loseFirstPutAnswer();
    const response = await add({ id, name: 'second', photoUrls: [] });
    expect(response.statusCode).toBe(409);
    expect(await stored(id)).toMatchObject({ name: 'first' });
  });

  it('answers 503 with Retry-After after bounded retries of throttling, storing nothing', async () => {
    const id = uniqueId();
    ddb.on(PutCommand).callsFake(() => Promise.reject(throttled()));
    const response = await add({ id, name: 'throttled', photoUrls: [] });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(response.body).not.toMatch(/exceeds|throughput|Exception/i);
    expect(ddb.commandCalls(PutCommand).length).toBeGreaterThan(1);
    expect(await stored(id)).toBeUndefined();
  });
});

describe('get pet under faults', () => {
  it('answers 503 with Retry-After after bounded retries of throttling', async () => {
    ddb.on(GetCommand).callsFake(() => Promise.reject(throttled()));
    const response = await read(uniqueId());
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(ddb.commandCalls(GetCommand).length).toBeGreaterThan(1);
  });
});
