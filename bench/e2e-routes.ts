/** Which routes `npm run bench` measures end to end (`bench/e2e.ts`), and why the others are not. */

/**
 * The routes measured end to end: the ones a client calls most (the pet catalog's add, read,
 * change and status search, the wallet's four) with their floors, and the three public routes
 * (no floor: they make no DynamoDB call). Each adds ≈ 10 s at the full setting (send-money ≈ 40 s).
 */
export const END_TO_END_ROUTES: readonly string[] = [
  'add-pet',
  'update-pet',
  'find-pets-by-status',
  'get-pet',
  'get-balance',
  'send-money',
  'list-transfers',
  'get-transfer',
  'openapi',
  'api-docs',
  'api-docs-asset',
];

/**
 * Why a route is not measured end to end (BENCHMARKS.md, *Which routes run end to end*). Its
 * bundle, cold init, warm overhead and round trips are judged as every function's. `run.ts`
 * refuses a route that is in neither list, so a new route is not left out silently.
 */
export const WITHOUT_END_TO_END: Readonly<Record<string, string>> = {
  'find-pets-by-tags':
    'the same code path as find-pets-by-status (one Query of an index, one BatchGetItem), a less used search',
  'update-pet-with-form':
    'the same read and conditional write as update-pet, from the query instead of a body',
  'upload-pet-image':
    'an upload writes S3 (s3rver locally: no like-for-like floor of S3 here), and a pet takes 20 photos',
  'get-pet-image':
    'its GetItem runs beside an S3 read (s3rver locally: no like-for-like floor of S3 here), as get-pet without the S3 read',
  'delete-pet':
    'each request needs a pet of its own: its add would run inside the measured loop, beside it, on the same DynamoDB Local',
  'create-webhook':
    'a wallet holds at most 10 endpoints, so thousands of registrations need thousands of wallets and tokens; merchants register once',
  'list-webhooks': 'back-office route (reserved concurrency: none), one GetItem as get-pet',
  'get-webhook': 'back-office route, one GetItem as get-pet',
  'update-webhook':
    'back-office route, a GetItem and a conditional write (a transaction of one item) as update-pet',
  'delete-webhook': 'each request needs an endpoint of its own (see create-webhook)',
  'rotate-webhook-secret':
    'back-office route, a GetItem and a conditional write (a transaction of one item) as update-pet',
  'list-webhook-deliveries': 'back-office route, a GetItem and one Query of an index',
  'replay-webhook':
    'each replay sets the local dispatcher expanding and delivering, which would run beside the measurement',
  'list-events': 'back-office route, one Query of an index',
  'get-event': 'back-office route, one GetItem as get-pet',
  'redeliver-event': 'each redelivery sets the local dispatcher delivering, beside the measurement',
};
