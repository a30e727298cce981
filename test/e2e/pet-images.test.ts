import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { localS3ClientConfig } from '#infra/local/s3-local.ts';
import {
  IMAGE_MEDIA_TYPES,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
} from '#shared/pets/image-type.ts';
import { buckets, S3_ENDPOINT_ENV } from '#shared/s3/buckets.ts';
import { pngDeclaring, pngOfSize, TINY_IMAGES } from '../support/images.ts';
import {
  type CallResult,
  call,
  callWithLines,
  expectProblem,
  gateway,
  tokenFor,
  uniquePetId,
} from './http.ts';

/**
 * `POST /api/v3/pet/{petId}/uploadImage` (Petstore `uploadFile`) and the image read back from the
 * URL it appends to the pet's photoUrls, through the local gateway, its local S3 (s3rver) and
 * DynamoDB Local; every refusal is checked to have stored nothing, in the bucket or on the pet.
 */

const env = inject('env');
const s3 = new S3Client(localS3ClientConfig(env[S3_ENDPOINT_ENV] as string));
const bucket = env[buckets.images.envVar] as string;
afterAll(() => s3.destroy());

const writer = () => tokenFor('write:pets read:pets');

/** The keys the bucket holds for a pet. */
async function storedKeys(petId: number): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `pets/${petId}/` }));
  return (listed.Contents ?? []).map((object) => object.Key as string);
}

async function addPet(token: string, photoUrls: string[] = []): Promise<{ id: number; etag: string }> {
  const id = uniquePetId();
  const added = await call('POST', '/api/v3/pet', { token, json: { id, name: 'doggie', photoUrls } });
  expect(added.status, added.text).toBe(200);
  return { id, etag: added.headers.get('etag') as string };
}

function upload(
  token: string,
  petId: number,
  bytes: Uint8Array,
  options: { contentType?: string; query?: string; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  return call('POST', `/api/v3/pet/${petId}/uploadImage${options.query ?? ''}`, {
    token,
    body: bytes,
    headers: { 'content-type': options.contentType ?? 'application/octet-stream', ...options.headers },
  });
}

async function photoUrlsOf(token: string, petId: number): Promise<string[]> {
  const read = await call('GET', `/api/v3/pet/${petId}`, { token });
  expect(read.status).toBe(200);
  return (read.json as { photoUrls: string[] }).photoUrls;
}

/** The URL's path, for `call` (which checks the answer against the document). */
const pathOf = (url: string): string => new URL(url).pathname;

describe('uploading an image of a pet', () => {
  it('stores each image format, lists its URL on the pet, and serves the same bytes with their media type', async () => {
    const token = await writer();
    const { id } = await addPet(token, ['https://example.com/doggie.png']);
    for (const mediaType of IMAGE_MEDIA_TYPES) {
      const uploaded = await upload(token, id, TINY_IMAGES[mediaType], {
        query: '?additionalMetadata=front%20view',
      });
      expect(uploaded.status, uploaded.text).toBe(200);
      expect(uploaded.json).toMatchObject({ code: 200, type: mediaType });
      expect(uploaded.headers.get('etag')).toMatch(/^"[\w-]+"$/);
    }
    const photoUrls = await photoUrlsOf(token, id);
    expect(photoUrls).toHaveLength(1 + IMAGE_MEDIA_TYPES.length);
    expect(photoUrls[0]).toBe('https://example.com/doggie.png');
    const reader = await tokenFor('read:pets');
    for (const [index, mediaType] of IMAGE_MEDIA_TYPES.entries()) {
      const url = photoUrls[index + 1] as string;
      expect(url.startsWith(`${gateway.baseUrl}/api/v3/pet/${id}/images/`)).toBe(true);
      const image = await call('GET', pathOf(url), { token: reader, headers: { accept: 'image/*' } });
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe(mediaType);
      expect(image.headers.get('x-content-type-options')).toBe('nosniff');
      // Read as a document, it may do nothing; saved, it is named as the image it is.
      expect(image.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      const imageId = url.slice(url.lastIndexOf('/') + 1);
      expect(image.headers.get('content-disposition')).toBe(
        `inline; filename="${imageId}.${mediaType.slice('image/'.length).replace('jpeg', 'jpg')}"`,
      );
      expect(Buffer.from(image.bytes).equals(Buffer.from(TINY_IMAGES[mediaType]))).toBe(true);
    }
    expect(await storedKeys(id)).toHaveLength(IMAGE_MEDIA_TYPES.length);
  });

  it('judges the bytes, not the Content-Type: a GIF sent as image/png is stored and served as a GIF', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    const uploaded = await upload(token, id, TINY_IMAGES['image/gif'], { contentType: 'image/png' });
    expect(uploaded.json).toMatchObject({ code: 200, type: 'image/gif' });
    const [url] = await photoUrlsOf(token, id);
    const image = await call('GET', pathOf(url as string), { token, headers: { accept: 'image/gif' } });
    expect(image.headers.get('content-type')).toBe('image/gif');
  });

  it('answers the base64 text, as API Gateway does, to a client whose first Accept type is not binary', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    await upload(token, id, TINY_IMAGES['image/png']);
    const [url] = await photoUrlsOf(token, id);
    const image = await call('GET', pathOf(url as string), { token, headers: { accept: '*/*' } });
    expect(image.status).toBe(200);
    expect(image.text).toBe(Buffer.from(TINY_IMAGES['image/png']).toString('base64'));
  });

  it('takes an image of exactly 4 MiB', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    const uploaded = await upload(token, id, pngOfSize(MAX_IMAGE_BYTES));
    expect(uploaded.json).toMatchObject({ code: 200, type: 'image/png' });
    expect(uploaded.json).toMatchObject({ message: expect.stringContaining(`${MAX_IMAGE_BYTES} bytes`) });
  });

  it('honours If-Match: a stale ETag is 412 and stores nothing; the current one stores the image', async () => {
    const token = await writer();
    const { id, etag } = await addPet(token);
    const first = await upload(token, id, TINY_IMAGES['image/png'], { headers: { 'if-match': etag } });
    expect(first.status).toBe(200);
    expectProblem(await upload(token, id, TINY_IMAGES['image/png'], { headers: { 'if-match': etag } }), 412);
    expect(await photoUrlsOf(token, id)).toHaveLength(1);
    expect(await storedKeys(id)).toHaveLength(1);
    const second = await upload(token, id, TINY_IMAGES['image/jpeg'], {
      headers: { 'if-match': first.headers.get('etag') as string },
    });
    expect(second.status).toBe(200);
  });

  it('names the image with the scheme the gateway was reached by, whatever X-Forwarded-Proto the client sent', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    // The gateway names its own scheme; a client's lower-case line used to win over it.
    for (const [name, value] of [
      ['x-forwarded-proto', 'https'],
      ['X-Forwarded-Proto', 'https'],
      ['x-forwarded-proto', 'http, https'],
    ] as const) {
      const uploaded = await upload(token, id, TINY_IMAGES['image/png'], { headers: { [name]: value } });
      expect(uploaded.status, uploaded.text).toBe(200);
    }
    const twoSpellings = await callWithLines(
      'POST',
      `/api/v3/pet/${id}/uploadImage`,
      [
        ['Authorization', `Bearer ${token}`],
        ['Content-Type', 'image/png'],
        ['X-Forwarded-Proto', 'https'],
        ['x-forwarded-proto', 'https'],
      ],
      TINY_IMAGES['image/png'],
    );
    expect(twoSpellings.status, twoSpellings.text).toBe(200);
    const photoUrls = await photoUrlsOf(token, id);
    expect(photoUrls).toHaveLength(4);
    for (const url of photoUrls)
      expect(url.startsWith(`${gateway.baseUrl}/api/v3/pet/${id}/images/`), url).toBe(true);
  });
});

describe('an upload refused, with nothing stored', () => {
  it('answers 413 naming the 4 MiB limit to an image of 4 MiB + 1 byte', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    const problem = expectProblem(await upload(token, id, pngOfSize(MAX_IMAGE_BYTES + 1)), 413);
    expect(problem.type).toBe('urn:problem-type:wallet-catalog:payload-too-large');
    expect(problem.detail).toMatch(/at most 4 MiB \(4194304 bytes\)/);
    expect(await photoUrlsOf(token, id)).toEqual([]);
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 413 to an image whose header declares more pixels than a client should decode', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    for (const [width, height] of [
      [MAX_IMAGE_SIDE + 1, 1],
      [1, MAX_IMAGE_SIDE + 1],
      [MAX_IMAGE_SIDE, Math.floor(MAX_IMAGE_PIXELS / MAX_IMAGE_SIDE) + 1],
      [100_000, 100_000],
    ] as const) {
      const problem = expectProblem(await upload(token, id, pngDeclaring(width, height)), 413);
      expect(problem.detail).toContain(`declares ${width} × ${height}`);
    }
    expect(await photoUrlsOf(token, id)).toEqual([]);
    expect(await storedKeys(id)).toEqual([]);
    // At the bounds: taken.
    const side = Math.floor(MAX_IMAGE_PIXELS / MAX_IMAGE_SIDE);
    expect((await upload(token, id, pngDeclaring(MAX_IMAGE_SIDE, side))).status).toBe(200);
  });

  it('answers 415 to text sent as image/png', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    const text = new TextEncoder().encode('just text pretending to be a picture, 4 kB of it. '.repeat(80));
    const problem = expectProblem(await upload(token, id, text, { contentType: 'image/png' }), 415);
    expect(problem.detail).toMatch(
      /not an image .*image\/png, image\/jpeg, image\/gif, image\/webp.*judged by its bytes/,
    );
    expect(await photoUrlsOf(token, id)).toEqual([]);
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 415 to a Content-Type that is no binary media type (the bytes would arrive as text)', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    expectProblem(
      await upload(token, id, TINY_IMAGES['image/png'], { contentType: 'application/json' }),
      415,
    );
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 400 to two Content-Type lines, whichever comes first', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    for (const [first, second] of [
      ['application/json', 'image/png'],
      ['image/png', 'application/json'],
      ['image/png', 'image/png'],
    ] as const) {
      const answer = await callWithLines(
        'POST',
        `/api/v3/pet/${id}/uploadImage`,
        [
          ['Authorization', `Bearer ${token}`],
          ['Content-Type', first],
          ['Content-Type', second],
        ],
        TINY_IMAGES['image/png'],
      );
      expect(expectProblem(answer, 400).detail).toMatch(/Content-Type/);
    }
    expect(await photoUrlsOf(token, id)).toEqual([]);
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 400 to an empty body', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    expectProblem(await upload(token, id, new Uint8Array()), 400);
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 404 for a pet that does not exist', async () => {
    const token = await writer();
    const id = uniquePetId();
    expectProblem(await upload(token, id, TINY_IMAGES['image/png']), 404);
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 422 to a 21st image: the pet lists 20 photo URLs already', async () => {
    const token = await writer();
    const full = Array.from({ length: 20 }, (_, i) => `https://example.com/${i}.png`);
    const { id } = await addPet(token, full);
    const problem = expectProblem(await upload(token, id, TINY_IMAGES['image/png']), 422);
    expect(problem.type).toBe('urn:problem-type:wallet-catalog:pet-photo-limit');
    expect(await photoUrlsOf(token, id)).toEqual(full);
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 400 to an additionalMetadata over 256 characters, and a petId past int64', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    const long = `?additionalMetadata=${'m'.repeat(257)}`;
    expectProblem(await upload(token, id, TINY_IMAGES['image/png'], { query: long }), 400);
    expectProblem(await upload(token, Number('9223372036854775808'), TINY_IMAGES['image/png']), 400);
    expect(await storedKeys(id)).toEqual([]);
  });

  it('answers 401 without a token and 403 without write:pets', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    const anonymous = await call('POST', `/api/v3/pet/${id}/uploadImage`, {
      body: TINY_IMAGES['image/png'],
      headers: { 'content-type': 'image/png' },
    });
    expectProblem(anonymous, 401);
    expectProblem(await upload(await tokenFor('read:pets'), id, TINY_IMAGES['image/png']), 403);
    expect(await storedKeys(id)).toEqual([]);
  });
});

describe('reading an image back', () => {
  it('needs read:pets: 401 without a token, 403 with write:pets alone', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    await upload(token, id, TINY_IMAGES['image/png']);
    const path = pathOf((await photoUrlsOf(token, id))[0] as string);
    expectProblem(await call('GET', path, { headers: { accept: 'image/*' } }), 401);
    expectProblem(
      await call('GET', path, { token: await tokenFor('write:pets'), headers: { accept: 'image/*' } }),
      403,
    );
  });

  it('answers 404 once the pet is deleted, and for a pet added again under its id', async () => {
    const token = await writer();
    const { id } = await addPet(token);
    await upload(token, id, TINY_IMAGES['image/png']);
    const path = pathOf((await photoUrlsOf(token, id))[0] as string);
    const image = await call('GET', path, { token, headers: { accept: 'image/*' } });
    expect(image.status).toBe(200);
    expect(image.headers.get('cache-control')).toBe('private, max-age=60');
    expect((await call('DELETE', `/api/v3/pet/${id}`, { token })).status).toBe(200);
    expectProblem(await call('GET', path, { token, headers: { accept: 'image/*' } }), 404);
    const again = await call('POST', '/api/v3/pet', { token, json: { id, name: 'doggie', photoUrls: [] } });
    expect(again.status, again.text).toBe(200);
    expectProblem(await call('GET', path, { token, headers: { accept: 'image/*' } }), 404);
  });

  it('answers 404 for an image id nobody was given, and 400 for one of another form', async () => {
    const reader = await tokenFor('read:pets');
    expectProblem(
      await call('GET', `/api/v3/pet/${uniquePetId()}/images/AAAAAAAAAAAAAAAAAAAAAA`, { token: reader }),
      404,
    );
    expectProblem(
      await call('GET', `/api/v3/pet/${uniquePetId()}/images/..%2F..%2Fsecret`, { token: reader }),
      400,
    );
  });
});
