import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import createClient from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import { openApiJson } from '#shared/openapi.generated.js';
import { CLIENT_TYPES_FILE, generateClientTypes } from '../../scripts/client-types.ts';
import { uniqueSub } from '../support/events.ts';
import type { paths } from './client/api.generated.js';
import { gateway, tokenFor, uniquePetId } from './http.ts';

/** A client as docs/typed-client.md shows it: openapi-fetch over the types openapi-typescript generated. */
const clientFor = (token: string) =>
  createClient<paths>({ baseUrl: gateway.baseUrl, headers: { authorization: `Bearer ${token}` } });

describe('a typed client generated from the OpenAPI document', () => {
  it('is what openapi-typescript makes of the current document (the types tsc compiled this test against)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'typed-client-'));
    try {
      const fresh = join(dir, 'api.d.ts');
      await generateClientTypes(openApiJson, fresh);
      expect(await readFile(fresh, 'utf8')).toBe(await readFile(CLIENT_TYPES_FILE, 'utf8'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('adds a pet, reads it back and reads the balance through openapi-fetch', async () => {
    const sub = uniqueSub('typed');
    const client = clientFor(await tokenFor('write:pets read:pets read:wallet', { sub }));
    const id = uniquePetId();

    const added = await client.POST('/api/v3/pet', {
      body: { id, name: 'Typed', photoUrls: ['https://example.com/typed.png'], status: 'available' },
    });
    expect(added.response.status, JSON.stringify(added.error)).toBe(200);
    // Typed: `data` is the Pet schema, so `name` is a string here without a cast.
    const name: string | undefined = added.data?.name;
    expect(name).toBe('Typed');

    const read = await client.GET('/api/v3/pet/{petId}', { params: { path: { petId: id } } });
    expect(read.response.status).toBe(200);
    expect(read.data).toEqual(added.data);

    const balance = await client.GET('/api/wallet/balance');
    expect(balance.response.status).toBe(200);
    expect(balance.data).toMatchObject({ address: sub, balance: 0 });

    const missing = await client.GET('/api/v3/pet/{petId}', { params: { path: { petId: uniquePetId() } } });
    expect(missing.response.status).toBe(404);
    // Errors are typed too: the Problem schema.
    expect(missing.error?.status).toBe(404);
  });

  it('does not compile a request the document forbids, and the server refuses each one', async () => {
    const client = clientFor(await tokenFor('write:pets read:pets'));
    // Each `@ts-expect-error` is an assertion of tsc's: one that finds no error fails `npm test`.
    // @ts-expect-error `name` is required by the Pet schema.
    const unnamed = await client.POST('/api/v3/pet', { body: { photoUrls: [] } });
    expect(unnamed.response.status).toBe(422);
    // @ts-expect-error petId is an integer.
    const wordId = await client.GET('/api/v3/pet/{petId}', { params: { path: { petId: 'one' } } });
    expect(wordId.response.status).toBe(400);
    // @ts-expect-error no such path in the document.
    const unknown = await client.GET('/api/v3/pets');
    expect(unknown.response.status).toBe(404);
  });
});
