/**
 * The requests the benchmark sends: realistic ones, as a client sends them and as API Gateway
 * (REST, proxy integration) hands them to a function after the authorizer allowed the call.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { assets } from '#functions/api-docs-asset/assets.generated.js';
import { callerIdentity } from '#infra/local/proxy-event.ts';
import { methodArnFor } from '#shared/auth/policy.ts';
import { SCOPES } from '#shared/routes.ts';
import type { Pet } from '#shared/schemas/pet.ts';

/** Every scope the API knows: the benchmark's callers may call every route. */
export const ALL_SCOPES = Object.keys(SCOPES).join(' ');

/** Ids from 2^52 up: far from the ids the service draws itself (milliseconds since 2025 × 4096). */
const PET_ID_BASE = 2 ** 52;
let petSequence = Math.floor(Math.random() * 2 ** 40);

/** A fresh pet id no other request of any run uses, a safe integer. */
export function nextBenchPetId(): number {
  petSequence++;
  return PET_ID_BASE + petSequence;
}

/** A Petstore pet with every field set (id, category, photo URLs, tags, status). */
export function fullPet(id: number): Pet {
  return {
    id,
    name: 'Rex the benchmark dog',
    category: { id: 1, name: 'Dogs' },
    photoUrls: ['https://example.com/photos/rex-1.jpg', 'https://example.com/photos/rex-2.jpg'],
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

const REGION = 'us-east-1';
const ACCOUNT_ID = '123456789012';
const API_ID = 'a1b2c3d4e5';
const STAGE = 'prod';
const HOST = `${API_ID}.execute-api.${REGION}.amazonaws.com`;

/** The method ARN API Gateway gives the authorizer for a request. */
export function methodArn(method: string, path: string): string {
  return methodArnFor({ region: REGION, accountId: ACCOUNT_ID, apiId: API_ID, stage: STAGE, method, path });
}

/** A TOKEN authorizer event for `token`. */
export function authorizerEvent(
  token: string,
  method = 'GET',
  path = '/api/wallet/balance',
): APIGatewayTokenAuthorizerEvent {
  return { type: 'TOKEN', authorizationToken: `Bearer ${token}`, methodArn: methodArn(method, path) };
}

export interface ProxyRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** The route's resource path, e.g. `/api/v3/pet/{petId}`. */
  readonly resource: string;
  readonly pathParameters?: Record<string, string>;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  /** The caller; `undefined` on public routes, where no authorizer runs. */
  readonly sub?: string;
  readonly token?: string;
}

/**
 * A REST API proxy (v1) event with the headers a regional endpoint adds (forwarding, tracing),
 * the authorizer's context (principal, scopes, latency) and a full request context.
 */
export function proxyEvent(request: ProxyRequest): APIGatewayProxyEvent {
  const requestId = randomUUID();
  const now = Date.now();
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'Accept-Encoding': 'gzip, deflate, br',
    ...(request.token === undefined ? {} : { Authorization: `Bearer ${request.token}` }),
    ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    Host: HOST,
    'User-Agent': 'wallet-catalog-bench/1.0',
    'X-Amzn-Trace-Id': `Root=1-${Math.floor(now / 1000).toString(16)}-${requestId.replaceAll('-', '').slice(0, 24)}`,
    'X-Forwarded-For': '203.0.113.7',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
    ...request.headers,
  };
  return {
    resource: request.resource,
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: request.pathParameters ?? null,
    stageVariables: null,
    body: request.body ?? null,
    isBase64Encoded: false,
    requestContext: {
      accountId: ACCOUNT_ID,
      apiId: API_ID,
      authorizer:
        request.sub === undefined
          ? null
          : {
              principalId: request.sub,
              sub: request.sub,
              scope: ALL_SCOPES,
              // The token's exp, which the functions check on every request (an hour ahead).
              exp: String(Math.floor(now / 1000) + 3600),
              integrationLatency: 0,
            },
      domainName: HOST,
      domainPrefix: API_ID,
      extendedRequestId: requestId.slice(0, 16),
      httpMethod: request.method,
      identity: callerIdentity('203.0.113.7', 'wallet-catalog-bench/1.0'),
      path: `/${STAGE}${request.path}`,
      protocol: 'HTTP/1.1',
      requestId,
      requestTime: new Date(now).toUTCString(),
      requestTimeEpoch: now,
      resourceId: 'abc123',
      resourcePath: request.resource,
      stage: STAGE,
    },
  };
}

/** The movement the benchmark's get-transfer reads when the caller names none: the stub answers any id. */
export const BENCH_TRANSFER_ID = '00000000-0000-4000-8000-000000000000';

/**
 * One request of each route, by function folder; `sub` is the caller, `token` its access token,
 * `transferId` one of the caller's movements (its funding deposit in the end-to-end benchmark).
 */
export function routeRequest(
  functionDir: string,
  sub: string,
  token: string,
  transferId = BENCH_TRANSFER_ID,
): ProxyRequest {
  switch (functionDir) {
    case 'add-pet':
      return {
        method: 'POST',
        path: '/api/v3/pet',
        resource: '/api/v3/pet',
        body: JSON.stringify(fullPet(nextBenchPetId())),
        sub,
        token,
      };
    case 'get-pet': {
      const petId = String(PET_ID_BASE + 1);
      return {
        method: 'GET',
        path: `/api/v3/pet/${petId}`,
        resource: '/api/v3/pet/{petId}',
        pathParameters: { petId },
        sub,
        token,
      };
    }
    case 'get-balance':
      return { method: 'GET', path: '/api/wallet/balance', resource: '/api/wallet/balance', sub, token };
    case 'send-money':
      return {
        method: 'POST',
        path: '/api/wallet/send',
        resource: '/api/wallet/send',
        body: sendBody(`recipient-of-${sub}`),
        headers: { 'Idempotency-Key': randomUUID() },
        sub,
        token,
      };
    case 'list-transfers':
      // The first page at the default size (20): the caller's sends fill it by the time it is measured.
      return { method: 'GET', path: '/api/wallet/transfers', resource: '/api/wallet/transfers', sub, token };
    case 'get-transfer':
      return {
        method: 'GET',
        path: `/api/wallet/transfers/${transferId}`,
        resource: '/api/wallet/transfers/{transferId}',
        pathParameters: { transferId },
        sub,
        token,
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

/**
 * The DynamoDB calls one successful request of each function makes (as `round-trips.test.ts`
 * asserts): the floor the end-to-end benchmark compares with, and the round trips of the cost model.
 */
export const DYNAMODB_CALLS: Readonly<
  Record<
    string,
    readonly ('GetItem' | 'PutItem' | 'UpdateItem' | 'BatchGetItem' | 'Query' | 'TransactWriteItems')[]
  >
> = {
  authorizer: [],
  'add-pet': ['PutItem'],
  'get-pet': ['GetItem'],
  // The wallet and its hot marker, in one read.
  'get-balance': ['BatchGetItem'],
  // The running balances need the two accounts (and the key's claim) read before the transaction;
  // the claim of the recipient's direct credit is written beside the read.
  'send-money': ['BatchGetItem', 'UpdateItem', 'TransactWriteItems'],
  // The first page: the history query and the hot marker's read, at once.
  'list-transfers': ['Query', 'BatchGetItem'],
  // The movement and its credit's state, in one read.
  'get-transfer': ['BatchGetItem'],
  openapi: [],
};

/** How many of a route's calls go out beside another one, adding no round trip of their own. */
export const CALLS_BESIDE_ANOTHER: Readonly<Record<string, number>> = {
  'send-money': 1,
  'list-transfers': 1,
};
