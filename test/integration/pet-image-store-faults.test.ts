import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { createGetPetImageHandler } from '#functions/get-pet-image/handler.ts';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { TemporarilyUnavailableError } from '#shared/errors.ts';
import { imagePath } from '#shared/pets/pet-image-http.ts';
import { createPetImageStore } from '#shared/pets/pet-image-store.ts';
import { newImageId } from '#shared/pets/pet-images.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { answeringBy } from '#shared/request-deadline.ts';
import { createS3Client } from '#shared/s3/client.ts';
import { apiEvent, invoke, lambdaContext } from '../support/events.ts';
import { TINY_IMAGES } from '../support/images.ts';
import { uniquePetId } from '../support/pets.ts';

/*
 * S3 that takes the connection and never answers, on loopback: the image functions answer 503 with
 * Retry-After before their timeout, as for DynamoDB, not the gateway's 504 after it. The SDK's three
 * tries of 5 s each took 15 s, past the functions' 10 s.
 */
const sockets = new Set<Socket>();
const silent = createServer((socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
silent.listen(0, '127.0.0.1');
await once(silent, 'listening');
const address = silent.address();
if (address === null || typeof address === 'string') throw new Error('no port');
const s3 = createS3Client({ endpoint: `http://127.0.0.1:${address.port}` });
const client = createDocumentClient();
afterAll(() => {
  s3.destroy();
  client.destroy();
  for (const socket of sockets) socket.destroy();
  silent.close();
});
const bucketName = 'images-of-a-stalled-s3';

const pets = createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) });
const read = createGetPetImageHandler({ s3, client });

/** A read of image `imageId` of pet `petId` with read:pets. */
const imageReadEvent = (petId: number, imageId: string) =>
  apiEvent({
    method: 'GET',
    path: imagePath(petId, imageId),
    resource: '/api/v3/pet/{petId}/images/{imageId}',
    pathParameters: { petId: String(petId), imageId },
    scopes: ['read:pets'],
    headers: { accept: 'image/*' },
  });

/** Reads image `imageId` of pet `petId` with read:pets, within `context`. */
const readImage = (petId: number, imageId: string, context: ReturnType<typeof lambdaContext>) =>
  invoke(read, imageReadEvent(petId, imageId), context);

describe('the image functions against an S3 that never answers', () => {
  it('answer a read 503 with Retry-After before the function times out', async () => {
    // A pet that lists the image: else its read answers 404 and no longer waits for S3.
    const petId = uniquePetId();
    const imageId = newImageId();
    await pets.insert({
      id: petId,
      name: 'doggie',
      photoUrls: [`https://api.example.com${imagePath(petId, imageId)}`],
    });
    const context = lambdaContext('getPetImage', 4_000);
    const response = await readImage(petId, imageId, context);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
  });

  it('answer 404 for an image its pet does not list as soon as the pet is read, not waiting for S3', async () => {
    const petId = uniquePetId();
    await pets.insert({ id: petId, name: 'doggie', photoUrls: ['https://example.com/doggie.png'] });
    // Neither the function's deadline nor its S3 client's timeout comes before the test's own
    // timeout: a read that waited for S3 fails the test by timing out, whatever the machine's load.
    const patient = new S3Client({
      endpoint: `http://127.0.0.1:${address.port}`,
      forcePathStyle: true,
      maxAttempts: 1,
      requestHandler: { requestTimeout: 600_000 },
    });
    try {
      const context = lambdaContext('getPetImage', 600_000);
      const response = await invoke(
        createGetPetImageHandler({ s3: patient, client }),
        imageReadEvent(petId, newImageId()),
        context,
      );
      expect(response.statusCode).toBe(404);
    } finally {
      patient.destroy();
    }
  });

  it('end a store within the request, unavailable, however many tries the SDK had left', async () => {
    const store = createPetImageStore({ client: s3, bucketName });
    const deadline = Date.now() + 3_000;
    const put = answeringBy(deadline, () =>
      store.put(7, newImageId(), { bytes: TINY_IMAGES['image/png'], mediaType: 'image/png' }, undefined),
    );
    await expect(put).rejects.toBeInstanceOf(TemporarilyUnavailableError);
    expect(Date.now()).toBeLessThan(deadline);
  });
});
