import { describe, expect, it } from 'vitest';
import { handler as addPet } from '#functions/add-pet/handler.ts';
import { MAX_VIOLATIONS_LISTED } from '#shared/errors.ts';
import { apiEvent, invoke } from '../support/events.ts';

const write = { method: 'POST', path: '/api/v3/pet', scopes: ['write:pets'] };
/** Far below Lambda's 6 MB response limit, and what a client can show. */
const SMALL = 8_000;

describe('a 422 stays small whatever the body holds', () => {
  it('stops at maxItems on a huge wrong-typed array instead of judging every item', async () => {
    const photoUrls = new Array(200_000).fill(1);
    const response = await invoke(addPet, apiEvent({ ...write, body: { name: 'rex', photoUrls } }));
    expect(response.statusCode).toBe(422);
    expect(response.body.length).toBeLessThan(SMALL);
    expect(response.json.errors).toEqual([{ pointer: '/photoUrls', detail: expect.stringMatching(/20/) }]);
    expect(response.json.errorCount).toBe(1);
  });

  it('stops at a bound on the number of properties of an object with thousands of unknown ones', async () => {
    const extra = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`x${i}`, i]));
    const response = await invoke(
      addPet,
      apiEvent({ ...write, body: { name: 'rex', photoUrls: [], ...extra } }),
    );
    expect(response.statusCode).toBe(422);
    expect(response.body.length).toBeLessThan(SMALL);
    expect(response.json.errorCount).toBe(1);
  });

  it(`lists the first ${MAX_VIOLATIONS_LISTED} violations and counts them all`, async () => {
    const tags = Array.from({ length: 20 }, () => ({ id: 'one', name: 1 }));
    const response = await invoke(addPet, apiEvent({ ...write, body: { name: 'rex', photoUrls: [], tags } }));
    expect(response.statusCode).toBe(422);
    expect(response.body.length).toBeLessThan(SMALL);
    expect(response.json.errors).toHaveLength(MAX_VIOLATIONS_LISTED);
    expect(response.json.errorCount).toBe(40);
    expect(response.json.detail).toMatch(/; and 20 more$/);
  });

  it('clips a violation that quotes a megabyte-long property name', async () => {
    const key = 'k'.repeat(1_000_000);
    const response = await invoke(
      addPet,
      apiEvent({ ...write, rawBody: `{"name":"rex","photoUrls":[],"${key}":1}` }),
    );
    expect(response.statusCode).toBe(422);
    expect(response.body.length).toBeLessThan(SMALL);
    expect(response.json.errors).toEqual([
      { pointer: expect.stringMatching(/^\/k+…$/), detail: 'is not allowed' },
    ]);
    expect(response.json.errorCount).toBe(1);
  });

  it('lists every violation, and their count, when there are few', async () => {
    const response = await invoke(addPet, apiEvent({ ...write, body: { photoUrls: 'x' } }));
    expect(response.statusCode).toBe(422);
    expect(response.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      '/name',
      '/photoUrls',
    ]);
    expect(response.json.errorCount).toBe(2);
  });
});
