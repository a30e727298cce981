import { afterAll, describe, expect, it } from 'vitest';
import { createAddPetHandler } from '#functions/add-pet/handler.ts';
import { createDeletePetHandler } from '#functions/delete-pet/handler.ts';
import { createFindPetsByStatusHandler } from '#functions/find-pets-by-status/handler.ts';
import { createFindPetsByTagsHandler } from '#functions/find-pets-by-tags/handler.ts';
import { createGetPetImageHandler } from '#functions/get-pet-image/handler.ts';
import { createUpdatePetHandler } from '#functions/update-pet/handler.ts';
import { createUpdatePetWithFormHandler } from '#functions/update-pet-with-form/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { createPetImageStore } from '#shared/pets/pet-image-store.ts';
import { shardOf } from '#shared/pets/pet-index.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { type OperationId, routes } from '#shared/routes.ts';
import { buckets } from '#shared/s3/buckets.ts';
import { createS3Client } from '#shared/s3/client.ts';
import { proxyEvent } from '../../bench/lambda-events.ts';
import {
  BENCH_ITEMS,
  BENCH_PNG_BASE64,
  DYNAMODB_CALLS,
  fullPet,
  nextBenchPetId,
  routeRequest,
  successStatus,
} from '../../bench/workload.ts';
import { lambdaContext, uniqueSub } from '../support/events.ts';
import { proxiedClient, startFaultProxy } from '../support/faults.ts';
import { roundTripCounter } from '../support/round-trips.ts';

/*
 * The pet catalog's round trips (test/support/round-trips.ts) for the very requests `npm run bench`
 * sends (bench/workload.ts), each on the caller's own pet: they must succeed with the route's
 * status, and make the calls the bench's floors and cost model take them to (`DYNAMODB_CALLS`).
 * Pets are added straight to DynamoDB Local, past the proxy, as add-pet adds them (with their index
 * entries).
 */
const proxy = await startFaultProxy();
const client = proxiedClient(proxy);
const pets = createPetRepository({
  client: createDocumentClient(),
  tableName: process.env[tables.pets.envVar] as string,
});
const roundTripsOf = roundTripCounter(proxy);
const s3 = createS3Client();
afterAll(() => s3.destroy());
const images = createPetImageStore({ client: s3, bucketName: process.env[buckets.images.envVar] as string });
const handlers = {
  'add-pet': createAddPetHandler({ client }),
  'update-pet': createUpdatePetHandler({ client }),
  'update-pet-with-form': createUpdatePetWithFormHandler({ client }),
  'delete-pet': createDeletePetHandler({ client }),
  'find-pets-by-status': createFindPetsByStatusHandler({ client }),
  'find-pets-by-tags': createFindPetsByTagsHandler({ client }),
  'get-pet-image': createGetPetImageHandler({ client, s3 }),
};

/** The bench's request of `dir` on the caller's pet: its calls, checked against the route's grant. */
async function benchRequest(dir: keyof typeof handlers, petId: number, { part = false } = {}) {
  const route = routes.find((r) => r.functionDir === dir);
  const request = routeRequest(dir, uniqueSub(), 'token', { ...BENCH_ITEMS, petId });
  // Called as is, not through `invoke`: an image's answer is base64 bytes, no JSON.
  return roundTripsOf(
    route?.operationId as OperationId,
    () => handlers[dir](proxyEvent(request), lambdaContext()),
    {
      part,
      status: successStatus(dir),
    },
  );
}

const sorted = (calls: readonly string[]) => [...calls].sort();

/** A pet of the bench's kind (a status, two tags), stored. */
async function storedPet(id = nextBenchPetId()) {
  await pets.insert(fullPet(id));
  return id;
}

describe("the pet catalog's round trips for the bench's requests, each covered by its route's grant", () => {
  it('add a pet with tags: one transaction, the pet and an entry per tag', async () => {
    const sent = await benchRequest('add-pet', BENCH_ITEMS.petId);
    expect(sent).toEqual(['TransactWriteItems']);
    expect(sent).toEqual(DYNAMODB_CALLS['add-pet']);
  });

  it('update a pet, its tags unchanged: a read, then one conditional write', async () => {
    // The grant's DeleteItem is for tags a change removes, which this one does not.
    const sent = await benchRequest('update-pet', await storedPet(), { part: true });
    expect(sent).toEqual(['GetItem', 'TransactWriteItems']);
    expect(sent).toEqual(DYNAMODB_CALLS['update-pet']);
  });

  it('rename a pet with the form: a read, then one conditional write', async () => {
    const sent = await benchRequest('update-pet-with-form', await storedPet());
    expect(sent).toEqual(['GetItem', 'TransactWriteItems']);
    expect(sent).toEqual(DYNAMODB_CALLS['update-pet-with-form']);
  });

  it('delete a pet with tags: a read, then one transaction removing it and its entries', async () => {
    const sent = await benchRequest('delete-pet', await storedPet());
    expect(sent).toEqual(['GetItem', 'TransactWriteItems']);
    expect(sent).toEqual(DYNAMODB_CALLS['delete-pet']);
  });

  it("find by status when the status's first shard fills the page: one Query, then one read of the pets", async () => {
    // Whatever else the table holds, 20 more pets in the first shard fill a page from it.
    for (let added = 0; added < 20; ) {
      const id = nextBenchPetId();
      if (shardOf(id) !== 0) continue;
      await storedPet(id);
      added++;
    }
    const sent = await benchRequest('find-pets-by-status', BENCH_ITEMS.petId);
    expect(sent).toEqual(['Query', 'BatchGetItem']);
    expect(sent).toEqual(DYNAMODB_CALLS['find-pets-by-status']);
  });

  it("read an image the pet lists: its photoUrls, one GetItem, beside the object's S3 read", async () => {
    const id = await storedPet();
    // The image the bench's pet lists (its second photo URL) and the bench's request reads.
    const imageId = new URL(fullPet(id).photoUrls[1] as string).pathname.split('/').at(-1) as string;
    const png = new Uint8Array(Buffer.from(BENCH_PNG_BASE64, 'base64'));
    await images.put(id, imageId, { bytes: png, mediaType: 'image/png' }, undefined);
    const sent = await benchRequest('get-pet-image', id);
    expect(sent).toEqual(['GetItem']);
    expect(sent).toEqual(DYNAMODB_CALLS['get-pet-image']);
  });

  it('find by tags when the first tag fills the page: one Query, then one read of the pets', async () => {
    for (let added = 0; added < 20; added++) await storedPet();
    const sent = await benchRequest('find-pets-by-tags', BENCH_ITEMS.petId);
    expect(sorted(sent)).toEqual(sorted(DYNAMODB_CALLS['find-pets-by-tags'] ?? []));
    expect(sent).toEqual(['Query', 'BatchGetItem']);
  });
});
