/**
 * Example events for `npm run invoke`, one per route, one for the authorizer and one for the
 * credit poster (a stream record of a credit in transit), built from the route table: what the deployed API Gateway sends each function for a typical request (a REST
 * proxy v1 event after the authorizer allowed the caller `alice`; a TOKEN authorizer event).
 * `scripts/generate-events.ts` writes them to `events/`; a test keeps the files and this in sync.
 */
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, DynamoDBStreamEvent } from 'aws-lambda';
import { CREDIT_POSTER_NAME } from '#infra/credit-poster-settings.ts';
import { methodArnFor } from '#shared/auth/policy.ts';
import { operationContracts } from '#shared/openapi-operations.ts';
import { type OperationId, type Route, routes } from '#shared/routes.ts';
import { proxyEvent } from '../proxy-event.ts';

/**
 * Stands for a bearer token in an event file: `npm run invoke` replaces it with a token of the
 * local issuer (or with `--token`), since a committed token would expire and the issuer's key is
 * made per machine.
 */
export const TOKEN_PLACEHOLDER = '<local-token>';

/** Stands for that token's `exp` in the authorizer's context, replaced along with it. */
export const TOKEN_EXP_PLACEHOLDER = '<local-token-exp>';

/** The caller of every example; `npm run wallet:fund -- --address alice` gives it money. */
export const EXAMPLE_SUB = 'alice';

const ACCOUNT_ID = '123456789012';
const REGION = 'us-east-1';
const API_ID = 'abcdef1234';
const STAGE = 'dev';
const SOURCE_IP = '203.0.113.10';
const USER_AGENT = 'curl/8.5.0';
// Fixed, so that generating again writes the same bytes.
const REQUEST_TIME = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));

/** What varies per operation; a route not named here gets a request without body or parameters. */
const REQUESTS: Partial<
  Record<
    OperationId,
    {
      body?: unknown;
      pathParameters?: Record<string, string>;
      headers?: Record<string, string>;
      /** The query string, without `?`. */
      query?: string;
      /** A body of bytes (an upload), base64 as API Gateway passes a binary media type, and its type. */
      bytes?: { base64: string; contentType: string };
    }
  >
> = {
  addPet: {
    body: {
      id: 10,
      name: 'doggie',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['string'],
      tags: [{ id: 0, name: 'string' }],
      status: 'available',
    },
  },
  getPetById: { pathParameters: { petId: '10' } },
  updatePet: {
    body: {
      id: 10,
      name: 'doggie',
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['string'],
      tags: [{ id: 0, name: 'string' }],
      status: 'sold',
    },
  },
  updatePetWithForm: { pathParameters: { petId: '10' }, query: 'name=doggie&status=pending' },
  deletePet: { pathParameters: { petId: '10' } },
  findPetsByStatus: { query: 'status=available&limit=20' },
  findPetsByTags: { query: 'tags=string&tags=friendly&limit=20' },
  // A PNG of one transparent pixel (67 bytes).
  uploadFile: {
    pathParameters: { petId: '10' },
    query: 'additionalMetadata=front%20view',
    bytes: {
      base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
      contentType: 'image/png',
    },
  },
  getPetImage: {
    pathParameters: { petId: '10', imageId: 'Q2hlY2tvdXRJbWFnZTAxMA' },
    headers: { Accept: 'image/*' },
  },
  getBalance: {},
  sendMoney: {
    body: { toAddress: 'bob', amount: 12.34 },
    headers: { 'Idempotency-Key': '0b6c6b1e-first-transfer' },
  },
  getOpenApi: {},
};

/** `getBalance` → `get-balance`. */
export const eventFileName = (name: string): string =>
  `${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}.json`;

function routeEvent(route: Route): APIGatewayProxyEvent {
  const request = REQUESTS[route.operationId as OperationId] ?? {};
  // A path parameter without an example value takes its own name as value.
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
  const pathParameters =
    names.length === 0
      ? null
      : Object.fromEntries(names.map((name) => [name, request.pathParameters?.[name] ?? name]));
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => pathParameters?.[name] ?? name);
  // A body the table does not give is the example the OpenAPI document shows for the route.
  const contract = operationContracts[route.operationId as OperationId];
  const example = request.body ?? (contract?.requestBody ? contract.requestExample : undefined);
  const body = example === undefined ? null : JSON.stringify(example);
  const host = `${API_ID}.execute-api.${REGION}.amazonaws.com`;
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Host: host,
    'User-Agent': USER_AGENT,
    'X-Forwarded-For': SOURCE_IP,
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
    ...(route.scopes === null ? {} : { Authorization: `Bearer ${TOKEN_PLACEHOLDER}` }),
    ...(body === null ? {} : { 'Content-Type': contract?.requestMediaTypes?.[0] ?? 'application/json' }),
    ...(request.bytes === undefined ? {} : { 'Content-Type': request.bytes.contentType }),
    ...request.headers,
  };
  const event = proxyEvent({
    method: route.method,
    path,
    resource: route.path,
    headers,
    pathParameters,
    ...(request.query === undefined ? {} : { query: new URLSearchParams(request.query) }),
    ...(request.bytes === undefined ? { body } : { body: request.bytes.base64, isBase64Encoded: true }),
    // What the gateway passes on from the authorizer's answer (`functions/authorizer`): the token's
    // `exp` too, which the functions check on every call, cache hit or not.
    authorizer:
      route.scopes === null
        ? null
        : {
            principalId: EXAMPLE_SUB,
            sub: EXAMPLE_SUB,
            scope: route.scopes.join(' '),
            exp: TOKEN_EXP_PLACEHOLDER,
            integrationLatency: 0,
          },
    requestId: `00000000-0000-4000-8000-${String(routes.indexOf(route as never) + 1).padStart(12, '0')}`,
    resourceId: 'abc123',
    sourceIp: SOURCE_IP,
    userAgent: USER_AGENT,
    domainName: host,
    deployment: { accountId: ACCOUNT_ID, apiId: API_ID, stage: STAGE },
    now: REQUEST_TIME,
  });
  // On an execute-api host the request context's path starts with the stage.
  return { ...event, requestContext: { ...event.requestContext, path: `/${STAGE}${path}` } };
}

function authorizerEvent(): APIGatewayTokenAuthorizerEvent {
  return {
    type: 'TOKEN',
    authorizationToken: `Bearer ${TOKEN_PLACEHOLDER}`,
    methodArn: methodArnFor({
      region: REGION,
      accountId: ACCOUNT_ID,
      apiId: API_ID,
      stage: STAGE,
      method: 'GET',
      path: '/api/wallet/balance',
    }),
  };
}

/**
 * What the wallets table's stream hands the credit poster for one payment of 12.34 from `alice`
 * to a hot `bob`: the INSERT of its credit in transit, as the event source mapping's filter lets
 * it through. The poster reads the credit again by its key before posting it, so against a table
 * without that credit the invocation posts nothing and reports no failure.
 */
function creditPosterEvent(): DynamoDBStreamEvent {
  const transferId = '0b6c6b1e-5a8d-4c1e-9f3a-2d7b8c9e0f11';
  const createdAt = REQUEST_TIME.toISOString();
  const keys = { pk: { S: `CREDIT#${transferId}` } };
  return {
    Records: [
      {
        eventID: 'c4ca4238a0b923820dcc509a6f75849b',
        eventName: 'INSERT',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: REGION,
        dynamodb: {
          ApproximateCreationDateTime: REQUEST_TIME.getTime() / 1000,
          Keys: keys,
          NewImage: {
            ...keys,
            kind: { S: 'credit' },
            transferId: { S: transferId },
            fromAccount: { S: `W#${EXAMPLE_SUB}` },
            fromSeq: { N: '2' },
            toAccount: { S: 'W#bob' },
            amountMinor: { N: '1234' },
            currency: { S: 'USD' },
            createdAt: { S: createdAt },
            pendingFor: { S: 'W#bob#7' },
          },
          SequenceNumber: '400000000000000000001',
          SizeBytes: 260,
          StreamViewType: 'NEW_IMAGE',
        },
        eventSourceARN: `arn:aws:dynamodb:${REGION}:${ACCOUNT_ID}:table/wallet-catalog-${STAGE}-stateful-WalletsTable/stream/${createdAt.slice(0, 23)}`,
      },
    ],
  };
}

/** Every example event by file name under `events/`. */
export function exampleEvents(): Record<string, unknown> {
  return {
    [eventFileName('authorizer')]: authorizerEvent(),
    [eventFileName(CREDIT_POSTER_NAME.charAt(0).toLowerCase() + CREDIT_POSTER_NAME.slice(1))]:
      creditPosterEvent(),
    ...Object.fromEntries(routes.map((route) => [eventFileName(route.operationId), routeEvent(route)])),
  };
}

/** The text of an event file as the generator writes it (then formatted by Biome). */
export const eventFileText = (event: unknown): string => `${JSON.stringify(event, null, 2)}\n`;
