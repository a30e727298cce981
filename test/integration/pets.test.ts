import { describe, expect, it } from 'vitest';
import { handler as addPet } from '#functions/add-pet/handler.ts';
import { handler as getPet } from '#functions/get-pet/handler.ts';
import { handler as updatePet } from '#functions/update-pet/handler.ts';
import { invoke } from '../support/events.ts';
import { petEvent, petsEvent, uniquePetId } from '../support/pets.ts';

describe('add pet, then read it back', () => {
  it('stores the Swagger UI example body as is and reads the same pet back', async () => {
    const pet = {
      id: uniquePetId(),
      name: 'doggie',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['string'],
      tags: [{ id: 0, name: 'string' }],
      status: 'available',
    };
    const added = await invoke(addPet, petsEvent('POST', { body: pet }));
    expect(added.statusCode).toBe(200);
    expect(added.json).toEqual(pet);

    const read1 = await invoke(getPet, petEvent('GET', pet.id));
    expect(read1.statusCode).toBe(200);
    expect(read1.json).toEqual(pet);
    // Same shape as the request, down to the order of the members.
    expect(read1.body).toBe(JSON.stringify(pet));
  });

  it('assigns a positive safe integer id when the body has none', async () => {
    const added = await invoke(addPet, petsEvent('POST', { body: { name: 'rex', photoUrls: [] } }));
    expect(added.statusCode).toBe(200);
    expect(Number.isSafeInteger(added.json.id)).toBe(true);
    expect(added.json.id).toBeGreaterThan(0);
    const found = await invoke(getPet, petEvent('GET', added.json.id));
    expect(found.json).toEqual({ id: added.json.id, name: 'rex', photoUrls: [] });
  });

  it('refuses an id that exists with 409 and keeps the first pet', async () => {
    const id = uniquePetId();
    await invoke(addPet, petsEvent('POST', { body: { id, name: 'first', photoUrls: [] } }));
    const second = await invoke(addPet, petsEvent('POST', { body: { id, name: 'second', photoUrls: [] } }));
    expect(second.statusCode).toBe(409);
    expect(second.contentType).toBe('application/problem+json');
    const found = await invoke(getPet, petEvent('GET', id));
    expect(found.json.name).toBe('first');
  });

  it('answers 200 with the pet when the very same pet is added again, as a retry would', async () => {
    const pet = { id: uniquePetId(), name: 'twice', photoUrls: ['p'], category: { id: 2, name: 'Cats' } };
    expect((await invoke(addPet, petsEvent('POST', { body: pet }))).statusCode).toBe(200);
    // The same pet with its members in another order is still the same pet.
    const again = await invoke(
      addPet,
      petsEvent('POST', {
        body: { category: { name: 'Cats', id: 2 }, photoUrls: ['p'], name: 'twice', id: pet.id },
      }),
    );
    expect(again.statusCode).toBe(200);
    expect(again.json).toEqual(pet);
  });

  it('answers 404 for a pet that does not exist', async () => {
    const response = await invoke(getPet, petEvent('GET', uniquePetId()));
    expect(response.statusCode).toBe(404);
    expect(response.json).toMatchObject({ status: 404, title: 'Not found' });
  });

  it.each(['abc', '1.5', '9007199254740993'])('answers 400 for the path id %j', async (petId) => {
    const response = await invoke(getPet, petEvent('GET', petId));
    expect(response.statusCode).toBe(400);
  });

  it('answers 404 for an empty id: its path /api/v3/pet/ ends in a slash, which no operation is served at', async () => {
    const response = await invoke(getPet, petEvent('GET', ''));
    expect(response.statusCode).toBe(404);
  });

  it('stores nothing when the body is invalid', async () => {
    const id = uniquePetId();
    const response = await invoke(addPet, petsEvent('POST', { body: { id, name: 'x', photoUrls: 'nope' } }));
    expect(response.statusCode).toBe(422);
    expect((await invoke(getPet, petEvent('GET', id))).statusCode).toBe(404);
  });
});

// The Petstore's XML and form bodies, and its XML answers, which this API does not serve
// (docs/decisions/pet-resource.md, "Where we part from the Petstore").
describe('the Petstore media types this API leaves out', () => {
  const XML = '<pet><id>1</id><name>doggie</name><photoUrls/></pet>';
  it.each([
    ['POST', 'application/xml', XML],
    ['PUT', 'application/xml', XML],
    ['POST', 'application/x-www-form-urlencoded', 'name=doggie'],
    ['PUT', 'application/x-www-form-urlencoded', 'name=doggie'],
  ] as const)('%s /pet with a body of %s: 415, nothing stored', async (method, type, rawBody) => {
    const handler = method === 'POST' ? addPet : updatePet;
    const id = uniquePetId();
    const body = rawBody.replace('<id>1</id>', `<id>${id}</id>`);
    const response = await invoke(
      handler,
      petsEvent(method, { rawBody: body, headers: { 'content-type': type } }),
    );
    expect(response.statusCode).toBe(415);
    expect((await invoke(getPet, petEvent('GET', id))).statusCode).toBe(404);
  });

  it('answers JSON to Accept: application/xml (RFC 9110 lets a server disregard Accept)', async () => {
    const pet = { id: uniquePetId(), name: 'doggie', photoUrls: [] };
    expect((await invoke(addPet, petsEvent('POST', { body: pet }))).statusCode).toBe(200);
    const read = await invoke(getPet, petEvent('GET', pet.id, { headers: { accept: 'application/xml' } }));
    expect(read.statusCode).toBe(200);
    expect(read.contentType).toBe('application/json');
    expect(read.json).toEqual(pet);
  });
});
