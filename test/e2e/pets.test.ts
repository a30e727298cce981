import { beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, tokenFor, uniquePetId } from './http.ts';

/**
 * The catalog through the local gateway: real authorizer, real handlers, DynamoDB Local; one pass
 * per route and status (the rules behind each: test/unit, test/integration).
 */

let token: string;

beforeAll(async () => {
  token = await tokenFor('write:pets read:pets');
});

const addPet = (json: unknown) => call('POST', '/api/v3/pet', { token, json });
const getPet = (id: number | string) => call('GET', `/api/v3/pet/${id}`, { token });

describe('POST /api/v3/pet, then GET /api/v3/pet/{petId}', () => {
  it('stores the Swagger UI example body and reads the same pet back', async () => {
    const pet = {
      id: uniquePetId(),
      name: 'doggie',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['string'],
      tags: [{ id: 0, name: 'string' }],
      status: 'available',
    };
    const added = await addPet(pet);
    expect(added.status).toBe(200);
    expect(added.headers.get('content-type')).toBe('application/json');
    expect(added.json).toEqual(pet);

    const found = await getPet(pet.id);
    expect(found.status).toBe(200);
    expect(found.json).toEqual(pet);
  });

  it('refuses an id that exists with 409 and keeps the first pet', async () => {
    const id = uniquePetId();
    expect((await addPet({ id, name: 'first', photoUrls: [] })).status).toBe(200);

    const problem = expectProblem(await addPet({ id, name: 'second', photoUrls: [] }), 409);
    expect(problem.detail).toContain(String(id));
    expect((await getPet(id)).json).toMatchObject({ id, name: 'first' });
  });
});

describe('POST /api/v3/pet refuses a body it cannot store', () => {
  it('answers 400 for malformed JSON', async () => {
    const result = await call('POST', '/api/v3/pet', {
      token,
      body: '{"name": "doggie", "photoUrls": [',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(result, 400);
  });

  it('answers 415 for a body that is not declared JSON', async () => {
    const result = await call('POST', '/api/v3/pet', {
      token,
      body: 'name=doggie',
      headers: { 'content-type': 'text/plain' },
    });
    expectProblem(result, 415);
  });

  it('answers 422 listing every violation, and stores nothing', async () => {
    const id = uniquePetId();
    // Written as text: 2^53 + 1 has no exact JavaScript number, which is the point.
    const body = `{"id": 9007199254740993, "name": "", "colour": "brown", "status": "lost", "tags": [{"id": ${id}, "name": 7}]}`;
    const result = await call('POST', '/api/v3/pet', {
      token,
      body,
      headers: { 'content-type': 'application/json' },
    });
    const problem = expectProblem(result, 422);
    const errors = problem.errors as Array<{ pointer: string; detail: string }>;
    expect(errors.map((e) => e.pointer).sort()).toEqual(
      ['/colour', '/id', '/name', '/photoUrls', '/status', '/tags/0/name'].sort(),
    );
    for (const error of errors) expect(error.detail).toEqual(expect.any(String));
    expect(errors.find((e) => e.pointer === '/id')?.detail).toContain(String(Number.MAX_SAFE_INTEGER));
    expect(errors.find((e) => e.pointer === '/colour')?.detail).toBe('is not allowed');
  });
});

describe('GET /api/v3/pet/{petId}', () => {
  it('answers 404 for a pet that does not exist', async () => {
    const id = uniquePetId();
    const problem = expectProblem(await getPet(id), 404);
    expect(problem.detail).toContain(String(id));
  });

  // The other ids refused, and what is stored when a body is refused: test/integration/pets.test.ts.
  it.each(['abc', '%20'])('answers 400 for the petId %j', async (petId) => {
    expectProblem(await getPet(petId), 400);
  });
});
