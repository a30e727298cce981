import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { createAddPetHandler } from '#functions/add-pet/handler.ts';
import { createDeletePetHandler } from '#functions/delete-pet/handler.ts';
import { createGetPetImageHandler } from '#functions/get-pet-image/handler.ts';
import { createUpdatePetHandler } from '#functions/update-pet/handler.ts';
import { createUploadPetImageHandler } from '#functions/upload-pet-image/handler.ts';
import { createS3Client } from '#shared/s3/client.ts';
import { apiEvent, invoke, lambdaContext } from '../support/events.ts';
import { mentions, proxiedClient, startFaultProxy } from '../support/faults.ts';
import { TINY_IMAGES } from '../support/images.ts';
import { petEvent, petsEvent, uniquePetId } from '../support/pets.ts';

/*
 * An image is served while its pet lists its URL, and withdrawn with it: the pet deleted, the URL
 * left out by an update, the id taken by another pet since. The functions are the real ones, on
 * DynamoDB Local (through the fault proxy) and the local S3; before, the read was S3's alone and
 * served every one of these for a day (`immutable`).
 */
const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
const s3 = createS3Client();
afterAll(() => s3.destroy());

const addPet = createAddPetHandler({ client });
const updatePet = createUpdatePetHandler({ client });
const deletePet = createDeletePetHandler({ client });
const uploadImage = createUploadPetImageHandler({ client, s3 });
const getImage = createGetPetImageHandler({ client, s3 });

const png = TINY_IMAGES['image/png'];

async function add(id: number, photoUrls: string[] = []): Promise<void> {
  const added = await invoke(addPet, petsEvent('POST', { body: { id, name: 'doggie', photoUrls } }));
  expect(added.statusCode, added.body).toBe(200);
}

/** Uploads the PNG for pet `id`: the URL the pet now lists. */
async function upload(id: number): Promise<string> {
  const event: APIGatewayProxyEvent = {
    ...apiEvent({
      method: 'POST',
      path: `/api/v3/pet/${id}/uploadImage`,
      resource: '/api/v3/pet/{petId}/uploadImage',
      pathParameters: { petId: String(id) },
      headers: { 'content-type': 'image/png' },
      rawBody: Buffer.from(png).toString('base64'),
      scopes: ['write:pets'],
    }),
    isBase64Encoded: true,
  };
  const uploaded = await invoke(uploadImage, event);
  expect(uploaded.statusCode, uploaded.body).toBe(200);
  const url = (uploaded.json as { message: string }).message.match(/ at (\S+), now the last/)?.[1];
  expect(url).toMatch(/\/images\/[\w-]{22}$/);
  return url as string;
}

/** Reads the image at `url` with read:pets (the answer's body kept as the function gave it: base64 bytes). */
async function read(url: string): Promise<APIGatewayProxyResult> {
  const [, petId, imageId] = new URL(url).pathname.match(/\/pet\/(\d+)\/images\/([\w-]{22})$/) ?? [];
  return getImage(
    apiEvent({
      method: 'GET',
      path: new URL(url).pathname,
      resource: '/api/v3/pet/{petId}/images/{imageId}',
      pathParameters: { petId: String(petId), imageId: String(imageId) },
      scopes: ['read:pets'],
      headers: { accept: 'image/*' },
    }),
    lambdaContext('getPetImage'),
  );
}

const status = async (url: string) => (await read(url)).statusCode;

describe('an image is served while its pet lists its URL', () => {
  it('serves the bytes of a listed image, kept a minute at most, never as immutable', async () => {
    const id = uniquePetId();
    await add(id);
    const url = await upload(id);
    const answer = await read(url);
    expect(answer.statusCode).toBe(200);
    expect(Buffer.from(answer.body, 'base64').equals(Buffer.from(png))).toBe(true);
    expect(answer.headers?.['content-type']).toBe('image/png');
    expect(answer.headers?.['cache-control']).toBe('private, max-age=60');
  });

  it('answers 404 once the pet is deleted', async () => {
    const id = uniquePetId();
    await add(id);
    const url = await upload(id);
    expect(await status(url)).toBe(200);
    expect((await invoke(deletePet, petEvent('DELETE', id))).statusCode).toBe(200);
    expect(await status(url)).toBe(404);
  });

  it('answers 404 once an update leaves its URL out of photoUrls, and serves the images still listed', async () => {
    const id = uniquePetId();
    await add(id);
    const kept = await upload(id);
    const removed = await upload(id);
    const updated = await invoke(
      updatePet,
      petsEvent('PUT', { body: { id, name: 'doggie', photoUrls: ['https://example.com/a.png', kept] } }),
    );
    expect(updated.statusCode, updated.body).toBe(200);
    expect(await status(removed)).toBe(404);
    expect(await status(kept)).toBe(200);
    // An update that empties photoUrls withdraws every image.
    const emptied = await invoke(
      updatePet,
      petsEvent('PUT', { body: { id, name: 'doggie', photoUrls: [] } }),
    );
    expect(emptied.statusCode, emptied.body).toBe(200);
    expect(await status(kept)).toBe(404);
  });

  it("answers 404 for the old pet's image once another pet is added under its id", async () => {
    const id = uniquePetId();
    await add(id);
    const old = await upload(id);
    expect((await invoke(deletePet, petEvent('DELETE', id))).statusCode).toBe(200);
    await add(id, ['https://example.com/new.png']);
    expect(await status(old)).toBe(404);
    // The new pet's own images are its.
    expect(await status(await upload(id))).toBe(200);
  });

  it('serves an image by the path its URL names, whatever host the uploader addressed the API by', async () => {
    const id = uniquePetId();
    await add(id);
    const url = await upload(id);
    const elsewhere = `https://api.example.com${new URL(url).pathname}`;
    const updated = await invoke(
      updatePet,
      petsEvent('PUT', { body: { id, name: 'doggie', photoUrls: [elsewhere] } }),
    );
    expect(updated.statusCode, updated.body).toBe(200);
    expect(await status(url)).toBe(200);
  });

  it('answers 503 with Retry-After, not 500, when DynamoDB fails and the image exists', async () => {
    const id = uniquePetId();
    await add(id);
    const url = await upload(id);
    proxy.inject({ kind: 'server-error' }, { operation: 'GetItem', when: mentions(String(id)) });
    const answer = await read(url);
    expect(answer.statusCode, answer.body).toBe(503);
    expect(answer.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(proxy.requests('GetItem', mentions(String(id))).length).toBeGreaterThan(0);
  });
});
