import createClient from 'openapi-fetch';
import { beforeAll, describe, expect, it } from 'vitest';
import { TINY_IMAGES } from '../support/images.ts';
import { gateway, tokenFor, uniquePetId } from './http.ts';
import type { components, paths } from './petstore/petstore.generated.js';

/**
 * A client generated from the Swagger Petstore's own v3 document (test/e2e/petstore/openapi.yaml,
 * vendored; `npm run generate` runs openapi-typescript on it) drives the pet operations against the
 * local gateway with openapi-fetch, with no cast: all eight of them, the image read back from the
 * URL the upload lists in photoUrls. What a Petstore client expects, this API serves. Its answers
 * are not checked against our document here (openapi-fetch calls fetch itself); the same
 * operations are, in pet-resource.test.ts and pet-images.test.ts.
 */
type Pet = components['schemas']['Pet'];

let client: ReturnType<typeof createClient<paths>>;
let authorization: string;

beforeAll(async () => {
  authorization = `Bearer ${await tokenFor('write:pets read:pets')}`;
  // The Petstore's server is `/api/v3`, relative to where its document is served.
  client = createClient<paths>({ baseUrl: `${gateway.baseUrl}/api/v3`, headers: { authorization } });
});

describe('a Petstore client, generated from the Petstore v3 document', () => {
  it('adds, reads, updates, form-updates, finds by status and by tags, uploads an image and reads it back, and deletes a pet', async () => {
    const id = uniquePetId();
    const tag = `petstore-${id}`;
    const pet: Pet = {
      id,
      name: 'doggie',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['https://example.com/doggie.png'],
      tags: [{ id: 1, name: tag }],
      status: 'available',
    };

    const added = await client.POST('/pet', { body: pet });
    expect(added.response.status).toBe(200);
    expect(added.data).toEqual(pet);

    const read = await client.GET('/pet/{petId}', { params: { path: { petId: id } } });
    expect(read.data).toEqual(pet);

    const updated = await client.PUT('/pet', { body: { ...pet, status: 'pending' } });
    expect(updated.response.status).toBe(200);
    const status: Pet['status'] = updated.data?.status;
    expect(status).toBe('pending');

    const formed = await client.POST('/pet/{petId}', {
      params: { path: { petId: id }, query: { name: 'rex', status: 'sold' } },
    });
    expect(formed.data).toEqual({ ...pet, name: 'rex', status: 'sold' });

    const byTags = await client.GET('/pet/findByTags', { params: { query: { tags: [tag, 'no-such-tag'] } } });
    expect(byTags.data).toEqual([{ ...pet, name: 'rex', status: 'sold' }]);

    // Every page of `sold` pets, as a Petstore client that knows `Link` would walk them.
    const sold: Pet[] = [];
    let page = await client.GET('/pet/findByStatus', { params: { query: { status: 'sold' } } });
    for (;;) {
      expect(page.response.status).toBe(200);
      sold.push(...(page.data ?? []));
      const next = /^<\?([^>]+)>; rel="next"$/.exec(page.response.headers.get('link') ?? '')?.[1];
      if (next === undefined) break;
      page = await client.GET('/pet/findByStatus', {
        params: { query: { status: 'sold' } },
        querySerializer: () => next,
      });
    }
    expect(sold.filter((found) => found.id === id)).toEqual([{ ...pet, name: 'rex', status: 'sold' }]);

    // The Petstore types the body as a string (`format: binary`): the image as a binary string,
    // which the serializer sends as its bytes.
    const png = TINY_IMAGES['image/png'];
    const uploaded = await client.POST('/pet/{petId}/uploadImage', {
      params: { path: { petId: id }, query: { additionalMetadata: 'front view' } },
      body: Buffer.from(png).toString('latin1'),
      bodySerializer: (body) => Buffer.from(body ?? '', 'latin1'),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(uploaded.response.status).toBe(200);
    const type: string | undefined = uploaded.data?.type;
    expect(type).toBe('image/png');
    expect(uploaded.data?.code).toBe(200);

    const withPhoto = await client.GET('/pet/{petId}', { params: { path: { petId: id } } });
    const photoUrls: string[] = withPhoto.data?.photoUrls ?? [];
    expect(photoUrls.slice(0, -1)).toEqual(pet.photoUrls);
    const imageUrl = photoUrls.at(-1) ?? '';
    expect(uploaded.data?.message).toContain(imageUrl);
    // The URL is no Petstore operation: a client reads it as any image, with its token.
    const image = await fetch(imageUrl, { headers: { authorization, accept: 'image/*' } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(png);

    const deleted = await client.DELETE('/pet/{petId}', {
      params: { path: { petId: id }, header: { api_key: 'special-key' } },
    });
    expect(deleted.response.status).toBe(200);
    const gone = await client.GET('/pet/{petId}', { params: { path: { petId: id } } });
    expect(gone.response.status).toBe(404);
  });

  it('gets the statuses the Petstore documents for what it refuses', async () => {
    const missing = await client.PUT('/pet', { body: { id: uniquePetId(), name: 'ghost', photoUrls: [] } });
    expect(missing.response.status).toBe(404);
    const invalid = await client.POST('/pet', { body: { id: uniquePetId(), name: '', photoUrls: [] } });
    expect(invalid.response.status).toBe(422);
    const badStatus = await client.POST('/pet/{petId}', {
      params: { path: { petId: uniquePetId() }, query: { status: 'lost' } },
    });
    expect(badStatus.response.status).toBe(400);
  });
});
