/**
 * The route table: the one list of operations that CDK (API resources, methods, functions,
 * grants), the local gateway, the authorizer's policy and the OpenAPI document all read.
 */

/** OAuth 2.0 scopes the service knows. */
export const SCOPES = {
  'write:pets': 'Add, change and delete pets of the catalog',
  'read:pets': 'Read pets from the catalog',
  'read:wallet': 'Read the balance, the history and the events of your own wallet',
  'write:wallet': 'Send money from your own wallet',
  'read:webhooks':
    "Read your own wallet's webhook endpoints and their delivery log (its events also need read:wallet)",
  'write:webhooks':
    "Register, change, delete your own wallet's webhook endpoints and rotate their secrets (registering, changing, replaying and redelivering also need read:wallet)",
} as const;

export type Scope = keyof typeof SCOPES;

/** The DynamoDB tables, by logical name (see `shared/dynamodb/tables.ts`). */
export type TableName = 'pets' | 'wallets' | 'webhooks';

/** A function's grant on its one table: exactly the DynamoDB actions it needs there. */
export interface DataGrant {
  readonly table: TableName;
  readonly actions: readonly string[];
  /** The indexes of the table it queries: granted with its Query, and no other index. */
  readonly indexes?: readonly string[];
}

export interface Route {
  /** OpenAPI operationId; also the logical id of the function in CDK. */
  readonly operationId: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** API Gateway resource path; `{name}` segments are path parameters. */
  readonly path: string;
  /** Folder under `functions/` holding the handler. */
  readonly functionDir: string;
  /** Scopes the token must all hold; `null` for the public routes (no authorizer). */
  readonly scopes: readonly Scope[] | null;
  /** The one table the function may touch, and what it may do there. */
  readonly data?: DataGrant;
  /**
   * The S3 actions the function may take on the images bucket (`shared/s3/buckets.ts`), on objects
   * under its one prefix only: a function's second grant, beside its table's, and the only one of
   * a function without a table. `s3:ListBucket`, on the bucket itself, is there for one reason: a
   * read of a missing key is 404 `NoSuchKey` only to a caller that may list the bucket, and 403
   * `AccessDenied` to any other, which nothing could tell from a real denial.
   */
  readonly images?: { readonly actions: readonly ('s3:PutObject' | 's3:GetObject' | 's3:ListBucket')[] };
  readonly summary: string;
  /**
   * `seal`: the function seals webhook signing secrets: it may generate data keys under the secrets'
   * key (deployed: KMS GenerateDataKey, nothing else), see docs/decisions/webhooks.md.
   */
  readonly signingSecrets?: 'seal';
  /**
   * `true`: a function outside the wallet's that remembers Idempotency-Keys, for as long as the
   * wallet's (`wallet:idempotencyTtlSeconds`, given as IDEMPOTENCY_TTL_SECONDS).
   */
  readonly idempotencyKeys?: true;
  /**
   * `unreserved`: where a stage reserves concurrency (prod), this route's function reserves none and
   * runs in the account's unreserved pool. For the merchants' back-office routes (webhook endpoints,
   * the events API): little traffic, and every reservation comes out of one pool of 1,000 that must
   * keep 100 unreserved (test/infra/service-posture.test.ts). A small reservation would instead cap
   * them, and a burst past the cap is a throttled invocation, not an answer.
   */
  readonly reservedConcurrency?: 'unreserved';
  /** The function's timeout where it is not the project's 10 s (infra/constructs/project-function.ts). */
  readonly timeoutSeconds?: number;
}

export const routes = [
  {
    operationId: 'addPet',
    method: 'POST',
    path: '/api/v3/pet',
    functionDir: 'add-pet',
    scopes: ['write:pets'],
    // A pet with tags is written with its tag entries in one TransactWriteItems, authorised per
    // item action: Puts only (shared/pets/pet-repository.ts).
    data: { table: 'pets', actions: ['dynamodb:PutItem'] },
    summary: 'Add a new pet to the store',
  },
  {
    operationId: 'updatePet',
    method: 'PUT',
    path: '/api/v3/pet',
    functionDir: 'update-pet',
    scopes: ['write:pets'],
    // GetItem reads the pet and its revision; the pet's conditional Put, with the Puts and Deletes
    // of the tag entries that changed, is one TransactWriteItems (always: for its token).
    data: { table: 'pets', actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'] },
    summary: 'Update an existing pet',
  },
  {
    operationId: 'findPetsByStatus',
    method: 'GET',
    path: '/api/v3/pet/findByStatus',
    functionDir: 'find-pets-by-status',
    scopes: ['read:pets'],
    // A page: a Query per shard of the status index it reads (at most `limit` ids in all), then
    // one BatchGetItem of those pets.
    data: { table: 'pets', actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'], indexes: ['status'] },
    summary: 'Finds pets by status, a page at a time',
  },
  {
    operationId: 'findPetsByTags',
    method: 'GET',
    path: '/api/v3/pet/findByTags',
    functionDir: 'find-pets-by-tags',
    scopes: ['read:pets'],
    // A page: a Query per tag of the tags index it reads (at most `limit` ids in all), then one
    // BatchGetItem of those pets.
    data: { table: 'pets', actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'], indexes: ['tags'] },
    summary: 'Finds pets by tags, a page at a time',
  },
  {
    operationId: 'getPetById',
    method: 'GET',
    path: '/api/v3/pet/{petId}',
    functionDir: 'get-pet',
    scopes: ['read:pets'],
    data: { table: 'pets', actions: ['dynamodb:GetItem'] },
    summary: 'Find a pet by id',
  },
  {
    operationId: 'updatePetWithForm',
    method: 'POST',
    path: '/api/v3/pet/{petId}',
    functionDir: 'update-pet-with-form',
    scopes: ['write:pets'],
    // GetItem, then the pet's conditional PutItem (its tags, and so its tag entries, do not change).
    data: { table: 'pets', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    summary: 'Updates a pet in the store with form data',
  },
  {
    operationId: 'deletePet',
    method: 'DELETE',
    path: '/api/v3/pet/{petId}',
    functionDir: 'delete-pet',
    scopes: ['write:pets'],
    // GetItem, then the pet's conditional Delete with its tag entries' (one TransactWriteItems).
    data: { table: 'pets', actions: ['dynamodb:GetItem', 'dynamodb:DeleteItem'] },
    summary: 'Deletes a pet',
  },
  {
    operationId: 'uploadFile',
    method: 'POST',
    path: '/api/v3/pet/{petId}/uploadImage',
    functionDir: 'upload-pet-image',
    scopes: ['write:pets'],
    // GetItem reads the pet (there, with room for one more photo?); the pet's conditional PutItem
    // appends the image's URL (its tags, and so its tag entries, do not change).
    data: { table: 'pets', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    // The image, written under the images prefix before the pet lists it.
    images: { actions: ['s3:PutObject'] },
    summary:
      'Uploads an image of a pet (PNG, JPEG, GIF or WebP, at most 4 MiB) and lists its URL in photoUrls',
  },
  {
    operationId: 'getPetImage',
    method: 'GET',
    path: '/api/v3/pet/{petId}/images/{imageId}',
    functionDir: 'get-pet-image',
    scopes: ['read:pets'],
    // GetItem reads the pet's photoUrls: an image is served only while its pet lists its URL.
    data: { table: 'pets', actions: ['dynamodb:GetItem'] },
    // The image's object, whose key the URL a pet lists gives; and the bucket's listing, only so
    // that S3 answers a key nobody was given 404, not 403 (the function never lists).
    images: { actions: ['s3:GetObject', 's3:ListBucket'] },
    summary: 'An image of a pet, as uploaded, while the pet lists its URL',
  },
  {
    operationId: 'getBalance',
    method: 'GET',
    path: '/api/wallet/balance',
    functionDir: 'get-balance',
    scopes: ['read:wallet'],
    // BatchGetItem reads the wallet and its hot marker; PutItem opens the caller's wallet on its
    // first call (two conditional Puts in one TransactWriteItems, once per address: the wallet and
    // its skeleton's claim); a wallet ever hot finds its credits in transit with a Query per shard
    // of the pending index, and BatchGetItem reads where each stands.
    data: {
      table: 'wallets',
      actions: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
      indexes: ['pending'],
    },
    summary: "The balance of the caller's own wallet",
  },
  {
    operationId: 'sendMoney',
    method: 'POST',
    path: '/api/wallet/send',
    functionDir: 'send-money',
    scopes: ['write:wallet'],
    // One BatchGetItem reads both wallets, the recipient's hot marker and the key's record (only
    // the payer's and the key's for a recipient known hot); UpdateItem claims the recipient's
    // direct credit beside it; TransactWriteItems is authorised
    // per item action: its items are Updates and Puts only; PutItem marks a contended recipient hot
    // (and opens a refused payer's wallet).
    data: { table: 'wallets', actions: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'] },
    summary: "Send money from the caller's wallet to another address",
    // A payer busy with its own other payments is tried again until a commit could no longer end
    // before the timeout (shared/wallet/send/send-money.ts): longer than the other routes, so that it has
    // time left to wait, and inside API Gateway's 29 s (docs/decisions/concurrency-and-timeouts.md).
    timeoutSeconds: 20,
  },
  {
    operationId: 'listTransfers',
    method: 'GET',
    path: '/api/wallet/transfers',
    functionDir: 'list-transfers',
    scopes: ['read:wallet'],
    // Every page: a Query of the history index and a BatchGetItem of the wallet's hot marker; for a
    // wallet ever marked hot, a Query per shard of the history-shards index (its posted credits),
    // and on the first page one per shard of the pending index (its credits in transit). A
    // BatchGetItem reads the credits of the page's payments to hot wallets.
    data: {
      table: 'wallets',
      actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
      indexes: ['history', 'history-shards', 'pending'],
    },
    summary: "The caller's transfers and deposits, newest first, a page at a time",
  },
  {
    operationId: 'getTransfer',
    method: 'GET',
    path: '/api/wallet/transfers/{transferId}',
    functionDir: 'get-transfer',
    scopes: ['read:wallet'],
    // One BatchGetItem: the transfer and its credit (only a payment to a hot wallet has one).
    data: { table: 'wallets', actions: ['dynamodb:BatchGetItem'] },
    summary: 'One transfer or deposit of the caller',
  },
  {
    operationId: 'createWebhook',
    method: 'POST',
    path: '/api/wallet/webhooks',
    functionDir: 'create-webhook',
    // Events carry the wallet's amounts, counterparties, balances and references: whoever points
    // them at a URL, or reads them, must be able to read the wallet too (SECURITY.md, *Scope escalation through events*).
    scopes: ['write:webhooks', 'read:wallet'],
    // GetItem reads the wallet's endpoint set (with an Idempotency-Key, and the key's record, in one
    // TransactGetItems), PutItem writes it back under its version (and the key's record). The secret
    // is sealed under a data key of its own (signingSecrets: seal).
    data: { table: 'webhooks', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    signingSecrets: 'seal',
    idempotencyKeys: true,
    reservedConcurrency: 'unreserved',
    summary: "Register a webhook endpoint of the caller's wallet; the answer alone shows its signing secret",
  },
  {
    operationId: 'listWebhooks',
    method: 'GET',
    path: '/api/wallet/webhooks',
    functionDir: 'list-webhooks',
    scopes: ['read:webhooks'],
    data: { table: 'webhooks', actions: ['dynamodb:GetItem'] },
    reservedConcurrency: 'unreserved',
    summary: "The caller's webhook endpoints, newest first",
  },
  {
    operationId: 'getWebhook',
    method: 'GET',
    path: '/api/wallet/webhooks/{webhookId}',
    functionDir: 'get-webhook',
    scopes: ['read:webhooks'],
    data: { table: 'webhooks', actions: ['dynamodb:GetItem'] },
    reservedConcurrency: 'unreserved',
    summary: 'One webhook endpoint of the caller',
  },
  {
    operationId: 'updateWebhook',
    method: 'PATCH',
    path: '/api/wallet/webhooks/{webhookId}',
    functionDir: 'update-webhook',
    scopes: ['write:webhooks', 'read:wallet'],
    data: { table: 'webhooks', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    reservedConcurrency: 'unreserved',
    summary:
      'Change a webhook endpoint of the caller (JSON Merge Patch): url, event types, description, enabled or disabled',
  },
  {
    operationId: 'deleteWebhook',
    method: 'DELETE',
    path: '/api/wallet/webhooks/{webhookId}',
    functionDir: 'delete-webhook',
    scopes: ['write:webhooks'],
    data: { table: 'webhooks', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    reservedConcurrency: 'unreserved',
    summary: 'Delete a webhook endpoint of the caller',
  },
  {
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    path: '/api/wallet/webhooks/{webhookId}/rotate-secret',
    functionDir: 'rotate-webhook-secret',
    scopes: ['write:webhooks'],
    data: { table: 'webhooks', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    signingSecrets: 'seal',
    reservedConcurrency: 'unreserved',
    summary:
      'A new signing secret for a webhook endpoint of the caller; the previous one signs beside it for 24 h',
  },
  {
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: '/api/wallet/webhooks/{webhookId}/deliveries',
    functionDir: 'list-webhook-deliveries',
    scopes: ['read:webhooks'],
    // GetItem checks the endpoint is the caller's; a Query of the deliveries index reads its log.
    data: { table: 'webhooks', actions: ['dynamodb:GetItem', 'dynamodb:Query'], indexes: ['deliveries'] },
    reservedConcurrency: 'unreserved',
    summary: "A webhook endpoint's delivery attempts, newest first, a page at a time",
  },
  {
    operationId: 'replayWebhook',
    method: 'POST',
    path: '/api/wallet/webhooks/{webhookId}/replay',
    functionDir: 'replay-webhook',
    scopes: ['write:webhooks', 'read:wallet'],
    // GetItem reads the wallet's endpoint set (is it the caller's?); PutItem writes the replay
    // task the dispatcher expands into deliveries.
    data: { table: 'webhooks', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    reservedConcurrency: 'unreserved',
    summary: "Deliver every event of the caller's wallet since a time to one of its endpoints again",
  },
  {
    operationId: 'listEvents',
    method: 'GET',
    path: '/api/wallet/events',
    functionDir: 'list-events',
    scopes: ['read:webhooks', 'read:wallet'],
    // Queries of the events index: the caller's events, newest first.
    data: { table: 'webhooks', actions: ['dynamodb:Query'], indexes: ['events'] },
    reservedConcurrency: 'unreserved',
    summary:
      "The caller's wallet's events of the last 30 days, newest first, whether or not an endpoint took them",
  },
  {
    operationId: 'getEvent',
    method: 'GET',
    path: '/api/wallet/events/{eventId}',
    functionDir: 'get-event',
    scopes: ['read:webhooks', 'read:wallet'],
    data: { table: 'webhooks', actions: ['dynamodb:GetItem'] },
    reservedConcurrency: 'unreserved',
    summary: "One event of the caller's wallet",
  },
  {
    operationId: 'redeliverEvent',
    method: 'POST',
    path: '/api/wallet/events/{eventId}/redeliver',
    functionDir: 'redeliver-event',
    scopes: ['write:webhooks', 'read:wallet'],
    // GetItem reads the event and the wallet's endpoint set; PutItem writes the delivery task.
    data: { table: 'webhooks', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    reservedConcurrency: 'unreserved',
    summary: 'Deliver one event of the caller to one of its endpoints again',
  },
  {
    operationId: 'getOpenApi',
    method: 'GET',
    path: '/api/openapi.json',
    functionDir: 'openapi',
    scopes: null,
    summary: 'This OpenAPI document',
  },
  {
    operationId: 'getApiDocs',
    method: 'GET',
    path: '/api/docs',
    functionDir: 'api-docs',
    scopes: null,
    summary: 'The interactive reference of this API (Swagger UI), built from this document',
  },
  {
    operationId: 'getApiDocsAsset',
    method: 'GET',
    path: '/api/docs/{asset}',
    functionDir: 'api-docs-asset',
    scopes: null,
    summary: 'A script or style sheet of the reference page',
  },
] as const satisfies readonly Route[];

export type OperationId = (typeof routes)[number]['operationId'];

/** The route of an operation. */
export function routeOf(operationId: OperationId): Route {
  const route = routes.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`Unknown operation ${operationId}`);
  return route;
}
