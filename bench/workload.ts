/**
 * The requests the benchmark sends: realistic ones, as a client sends them and as API Gateway
 * (REST, proxy integration) hands them to a function after the authorizer allowed the call.
 */
import { randomUUID } from 'node:crypto';
import { assets } from '#functions/api-docs-asset/assets.generated.js';
import { operationContracts } from '#shared/openapi-operations.ts';
import { imageUrl } from '#shared/pets/pet-image-http.ts';
import { routes } from '#shared/routes.ts';
import type { Pet } from '#shared/schemas/pet.ts';
import type { ProxyRequest } from './lambda-events.ts';

/** Ids from 2^52 up: far from the ids the service draws itself (milliseconds since 2025 × 4096). */
const PET_ID_BASE = 2 ** 52;
let petSequence = Math.floor(Math.random() * 2 ** 40);

/** A fresh pet id no other request of any run uses, a safe integer. */
export function nextBenchPetId(): number {
  petSequence++;
  return PET_ID_BASE + petSequence;
}

/** An image id as the upload draws them (22 base64url characters). */
const BENCH_IMAGE_ID = 'YmVuY2gtaW1hZ2UtaWQwMA';

/**
 * A Petstore pet with every field set (id, category, photo URLs, tags, status). Its second photo
 * is an image uploaded to it: get-pet-image serves only an image its pet lists.
 */
export function fullPet(id: number): Pet {
  return {
    id,
    name: 'Rex the benchmark dog',
    category: { id: 1, name: 'Dogs' },
    photoUrls: [
      'https://example.com/photos/rex-1.jpg',
      imageUrl('https://api.example.com', id, BENCH_IMAGE_ID),
    ],
    tags: [
      { id: 10, name: 'friendly' },
      { id: 11, name: 'vaccinated' },
    ],
    status: 'available',
  };
}

/** The body of a transfer of 12.34 (USD) to `toAddress`, as a client writes it. */
export function sendBody(toAddress: string): string {
  return `{"toAddress":${JSON.stringify(toAddress)},"amount":12.34}`;
}

/**
 * The caller's own items a request names: its pet, one of its movements, one of its webhook
 * endpoints and one of its events. In the warm benchmark these are {@link BENCH_ITEMS}, which the
 * stub answers for any caller; end to end, each worker's own (`bench/e2e.ts`).
 */
export interface CallerItems {
  readonly petId: number;
  readonly transferId: string;
  readonly endpointId: string;
  readonly eventId: string;
}

/** What the stub (`bench/stub.ts`) holds: one pet, and a movement, endpoint and event of whoever asks. */
export const BENCH_ITEMS: CallerItems = {
  petId: PET_ID_BASE + 1,
  transferId: '00000000-0000-4000-8000-000000000000',
  endpointId: 'whep_benchEndpoint000000000',
  eventId: 'evt_benchEvent000000000000',
};

/** The status search and the tag search of the benchmark: what every bench pet has (`fullPet`). */
export const SEARCHED_STATUS = 'available';
export const SEARCHED_TAG = 'friendly';

/** A 1 × 1 PNG, the smallest image an upload takes. */
export const BENCH_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** Where endpoints registered by the benchmark deliver: never called in the warm run (nothing is delivered). */
export const BENCH_ENDPOINT_URL = 'https://hooks.example.com/wallet-catalog-bench';

/**
 * One request of each route, by function folder, as a client sends it and succeeding: `sub` is
 * the caller, `token` its access token, `own` the items of the caller it names.
 */
export function routeRequest(
  functionDir: string,
  sub: string,
  token: string,
  own: CallerItems = BENCH_ITEMS,
): ProxyRequest {
  const caller = { sub, token };
  const pet = { path: `/api/v3/pet/${own.petId}`, resource: '/api/v3/pet/{petId}' };
  const webhook = (suffix = '') => ({
    path: `/api/wallet/webhooks/${own.endpointId}${suffix}`,
    resource: `/api/wallet/webhooks/{webhookId}${suffix}`,
    pathParameters: { webhookId: own.endpointId },
  });
  const event = (suffix = '') => ({
    path: `/api/wallet/events/${own.eventId}${suffix}`,
    resource: `/api/wallet/events/{eventId}${suffix}`,
    pathParameters: { eventId: own.eventId },
  });
  switch (functionDir) {
    case 'add-pet':
      return {
        method: 'POST',
        path: '/api/v3/pet',
        resource: '/api/v3/pet',
        body: JSON.stringify(fullPet(nextBenchPetId())),
        ...caller,
      };
    // The caller's pet as it is: the same tags and status, so no index entry changes.
    case 'update-pet':
      return {
        method: 'PUT',
        path: '/api/v3/pet',
        resource: '/api/v3/pet',
        body: JSON.stringify(fullPet(own.petId)),
        ...caller,
      };
    case 'find-pets-by-status':
      return {
        method: 'GET',
        path: '/api/v3/pet/findByStatus',
        resource: '/api/v3/pet/findByStatus',
        query: `status=${SEARCHED_STATUS}`,
        ...caller,
      };
    case 'find-pets-by-tags':
      return {
        method: 'GET',
        path: '/api/v3/pet/findByTags',
        resource: '/api/v3/pet/findByTags',
        query: `tags=${SEARCHED_TAG}`,
        ...caller,
      };
    case 'get-pet':
      return { method: 'GET', ...pet, pathParameters: { petId: String(own.petId) }, ...caller };
    // A new name, as the Petstore's form sends it (in the query); the status, and so the index, stay.
    case 'update-pet-with-form':
      return {
        method: 'POST',
        ...pet,
        pathParameters: { petId: String(own.petId) },
        query: 'name=Rex%20the%20renamed%20dog',
        ...caller,
      };
    case 'delete-pet':
      return { method: 'DELETE', ...pet, pathParameters: { petId: String(own.petId) }, ...caller };
    case 'upload-pet-image':
      return {
        method: 'POST',
        path: `/api/v3/pet/${own.petId}/uploadImage`,
        resource: '/api/v3/pet/{petId}/uploadImage',
        pathParameters: { petId: String(own.petId) },
        headers: { 'Content-Type': 'image/png' },
        body: BENCH_PNG_BASE64,
        base64: true,
        ...caller,
      };
    case 'get-pet-image':
      return {
        method: 'GET',
        path: `/api/v3/pet/${own.petId}/images/${BENCH_IMAGE_ID}`,
        resource: '/api/v3/pet/{petId}/images/{imageId}',
        pathParameters: { petId: String(own.petId), imageId: BENCH_IMAGE_ID },
        headers: { Accept: 'image/png' },
        ...caller,
      };
    case 'get-balance':
      return { method: 'GET', path: '/api/wallet/balance', resource: '/api/wallet/balance', ...caller };
    case 'send-money':
      return {
        method: 'POST',
        path: '/api/wallet/send',
        resource: '/api/wallet/send',
        body: sendBody(`recipient-of-${sub}`),
        headers: { 'Idempotency-Key': randomUUID() },
        ...caller,
      };
    case 'list-transfers':
      // The first page at the default size (20): the caller's sends fill it by the time it is measured.
      return { method: 'GET', path: '/api/wallet/transfers', resource: '/api/wallet/transfers', ...caller };
    case 'get-transfer':
      return {
        method: 'GET',
        path: `/api/wallet/transfers/${own.transferId}`,
        resource: '/api/wallet/transfers/{transferId}',
        pathParameters: { transferId: own.transferId },
        ...caller,
      };
    case 'create-webhook':
      return {
        method: 'POST',
        path: '/api/wallet/webhooks',
        resource: '/api/wallet/webhooks',
        body: JSON.stringify({ url: BENCH_ENDPOINT_URL, description: 'Orders service' }),
        ...caller,
      };
    case 'list-webhooks':
      return { method: 'GET', path: '/api/wallet/webhooks', resource: '/api/wallet/webhooks', ...caller };
    case 'get-webhook':
      return { method: 'GET', ...webhook(), ...caller };
    case 'update-webhook':
      return {
        method: 'PATCH',
        ...webhook(),
        body: JSON.stringify({ description: 'Orders service, new host', eventTypes: ['transfer.received'] }),
        headers: { 'Content-Type': 'application/merge-patch+json' },
        ...caller,
      };
    case 'delete-webhook':
      return { method: 'DELETE', ...webhook(), ...caller };
    case 'rotate-webhook-secret':
      return { method: 'POST', ...webhook('/rotate-secret'), ...caller };
    case 'list-webhook-deliveries':
      return { method: 'GET', ...webhook('/deliveries'), ...caller };
    case 'replay-webhook':
      return {
        method: 'POST',
        ...webhook('/replay'),
        // An hour back: well inside the 30 days events are kept.
        body: JSON.stringify({ since: new Date(Date.now() - 3_600_000).toISOString() }),
        ...caller,
      };
    case 'list-events':
      return { method: 'GET', path: '/api/wallet/events', resource: '/api/wallet/events', ...caller };
    case 'get-event':
      return { method: 'GET', ...event(), ...caller };
    case 'redeliver-event':
      return {
        method: 'POST',
        ...event('/redeliver'),
        body: JSON.stringify({ webhookId: own.endpointId }),
        ...caller,
      };
    case 'openapi':
      return { method: 'GET', path: '/api/openapi.json', resource: '/api/openapi.json' };
    case 'api-docs':
      return { method: 'GET', path: '/api/docs', resource: '/api/docs' };
    case 'api-docs-asset': {
      // The page's script, the largest asset: its name carries a hash of the content.
      const asset = [...assets.keys()].find((name) => name.endsWith('.js')) ?? '';
      return {
        method: 'GET',
        path: `/api/docs/${asset}`,
        resource: '/api/docs/{asset}',
        pathParameters: { asset },
      };
    }
    default:
      throw new Error(`No request defined for functions/${functionDir}`);
  }
}

/** The status a route answers a request that succeeds with, as its OpenAPI contract states it. */
export function successStatus(functionDir: string): number {
  const route = routes.find((r) => r.functionDir === functionDir);
  if (!route) throw new Error(`functions/${functionDir} serves no route`);
  return operationContracts[route.operationId].success.status;
}

export type DynamoDBOperation =
  | 'GetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchGetItem'
  | 'Query'
  | 'TransactWriteItems';

/**
 * The DynamoDB calls one successful request of each function makes, for the requests above (as
 * `test/integration/round-trips.test.ts` asserts): the floor the end-to-end benchmark compares
 * with, and the round trips of the cost model. Every route with a table is listed.
 */
export const DYNAMODB_CALLS: Readonly<Record<string, readonly DynamoDBOperation[]>> = {
  authorizer: [],
  // A pet with tags: the pet and an entry per tag name, in one transaction.
  'add-pet': ['TransactWriteItems'],
  // The pet and its revision, then the write conditional on it: a transaction whatever the tags,
  // for its ClientRequestToken (shared/pets/pet-repository.ts).
  'update-pet': ['GetItem', 'TransactWriteItems'],
  // A page the first shard of the status fills: one Query of it, then the pets in one read.
  'find-pets-by-status': ['Query', 'BatchGetItem'],
  // A page the first tag fills: one Query of it, then the pets in one read.
  'find-pets-by-tags': ['Query', 'BatchGetItem'],
  'get-pet': ['GetItem'],
  'update-pet-with-form': ['GetItem', 'TransactWriteItems'],
  // The pet, then its delete with its tag entries' in one transaction.
  'delete-pet': ['GetItem', 'TransactWriteItems'],
  // The pet, then its conditional write with the new URL (the object goes to S3 between them).
  'upload-pet-image': ['GetItem', 'TransactWriteItems'],
  // The pet's photoUrls (is the image still listed?), read beside the object's S3 GetObject: one
  // round trip of each, at once.
  'get-pet-image': ['GetItem'],
  // The wallet and its hot marker, in one read.
  'get-balance': ['BatchGetItem'],
  // The running balances need the two accounts (and the key's claim) read before the transaction;
  // the claim of the recipient's direct credit is written beside the read.
  'send-money': ['BatchGetItem', 'UpdateItem', 'TransactWriteItems'],
  // The first page: the history query and the hot marker's read, at once.
  'list-transfers': ['Query', 'BatchGetItem'],
  // The movement and its credit's state, in one read.
  'get-transfer': ['BatchGetItem'],
  // The wallet's endpoint set, then its write under its version, a transaction of the one item for
  // its idempotency token (a secret is sealed between them: deployed, one KMS GenerateDataKey,
  // which is no DynamoDB call).
  'create-webhook': ['GetItem', 'TransactWriteItems'],
  'list-webhooks': ['GetItem'],
  'get-webhook': ['GetItem'],
  'update-webhook': ['GetItem', 'TransactWriteItems'],
  'delete-webhook': ['GetItem', 'TransactWriteItems'],
  'rotate-webhook-secret': ['GetItem', 'TransactWriteItems'],
  // The endpoint set (is it the caller's?), then a page of its delivery log.
  'list-webhook-deliveries': ['GetItem', 'Query'],
  // The endpoint set, then the replay's task.
  'replay-webhook': ['GetItem', 'PutItem'],
  // A page of the events index the first Query fills or ends.
  'list-events': ['Query'],
  'get-event': ['GetItem'],
  // The event, the endpoint set, then the delivery's task.
  'redeliver-event': ['GetItem', 'GetItem', 'PutItem'],
  openapi: [],
  'api-docs': [],
  'api-docs-asset': [],
};

/** How many of a route's calls go out beside another one, adding no round trip of their own. */
export const CALLS_BESIDE_ANOTHER: Readonly<Record<string, number>> = {
  'send-money': 1,
  'list-transfers': 1,
};
