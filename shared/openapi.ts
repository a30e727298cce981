import { errorMappings, internalErrorMapping } from './http/error-mapping.ts';
import { gatewayResponses } from './http/gateway-responses.ts';
import { problemType } from './http/problem.ts';
import { type OperationId, type Route, routes, SCOPES } from './routes.ts';
import { schemas } from './schemas/index.ts';

type SchemaName = (typeof schemas)[number]['$id'];

/** What the route table does not say about an operation's contract. */
interface OperationContract {
  readonly requestBody?: SchemaName;
  readonly success: {
    readonly status: number;
    readonly schema?: SchemaName;
    readonly description: string;
    /** Media types of a success body that is not JSON (the reference page and its assets). */
    readonly mediaTypes?: readonly string[];
  };
  /** Statuses the operation itself answers with problem+json (gateway statuses are added for every route). */
  readonly errors: readonly number[];
  readonly parameters?: readonly object[];
}

const contracts: Record<OperationId, OperationContract> = {
  addPet: {
    requestBody: 'Pet',
    success: { status: 200, schema: 'Pet', description: 'The stored pet' },
    errors: [400, 409, 415, 422, 503],
  },
  getPetById: {
    success: { status: 200, schema: 'Pet', description: 'The pet' },
    errors: [400, 404, 503],
    parameters: [
      {
        name: 'petId',
        in: 'path',
        required: true,
        schema: { type: 'integer', format: 'int64' },
        description: 'Id of the pet',
      },
    ],
  },
  getBalance: {
    success: {
      status: 200,
      schema: 'Balance',
      description:
        "The caller's wallet. The first call opens it (at 0): from then on it can receive money; transfers to an address with no open wallet are refused (unknown-recipient)",
    },
    errors: [503],
  },
  sendMoney: {
    requestBody: 'SendRequest',
    success: {
      status: 200,
      schema: 'Transfer',
      description:
        'The completed transfer (or, for a replayed Idempotency-Key, the original one). The recipient must have an open wallet (422 unknown-recipient otherwise), and its balance stays within the most a wallet holds (422 recipient-balance-limit)',
    },
    errors: [400, 415, 422, 503],
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
        description:
          'Makes the request safe to retry: the same key with the same body returns the original transfer and moves money once; with another body, 422. Kept for at least 24 hours.',
      },
    ],
  },
  listTransfers: {
    success: {
      status: 200,
      schema: 'TransferHistoryPage',
      description:
        'Your transfers and deposits, newest first, each with the balance after it. Pass nextCursor as cursor for the next page; a page continues below the last one, so movements arriving meanwhile never shift or repeat items',
    },
    errors: [400, 503],
    parameters: [
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        description: 'Items per page',
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        schema: { type: 'string', maxLength: 200 },
        description: "The previous page's nextCursor; another caller's or an edited cursor is a 400",
      },
    ],
  },
  getTransfer: {
    success: { status: 200, schema: 'TransferDetails', description: 'The transfer or deposit' },
    errors: [404, 503],
    parameters: [
      {
        name: 'transferId',
        in: 'path',
        required: true,
        schema: { type: 'string', maxLength: 64 },
        description: 'The id a transfer or a history item names; 404 unless you are one of its two parties',
      },
    ],
  },
  getOpenApi: { success: { status: 200, description: 'This OpenAPI 3.1 document' }, errors: [] },
  getApiDocs: {
    success: { status: 200, description: 'The reference page', mediaTypes: ['text/html'] },
    errors: [],
  },
  getApiDocsAsset: {
    success: {
      status: 200,
      description: 'The asset; its name carries a hash of its content',
      mediaTypes: ['text/javascript', 'text/css'],
    },
    errors: [404],
    parameters: [
      {
        name: 'asset',
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: '^[a-z-]+\\.[0-9a-f]{16}\\.(js|css)$', maxLength: 64 },
        description: 'File name of the asset, as the page links it',
      },
    ],
  },
};

/** `$id` identifies a schema to ajv; inside an OpenAPI document the component name does that. */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== '$id')
      .map(([k, v]) => [k, withoutIds(v)]),
  );
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The problem types a status can carry, from the same tables the service and the gateway answer with. */
function problemTypesFor(status: number): string[] {
  const own = errorMappings
    .filter(([, m]) => m.status === status)
    .map(([, m]) => `${problemType(m.slug)} (${m.title})`);
  const gateway = gatewayResponses
    .filter((r) => r.status === status)
    .map((r) => `${problemType(r.slug)} (${r.title})`);
  if (status === 500) own.push(`${problemType(internalErrorMapping.slug)} (${internalErrorMapping.title})`);
  return [...new Set([...own, ...gateway])];
}

function problemResponse(status: number) {
  return {
    description: `Problem details. Types: ${problemTypesFor(status).join('; ') || 'see title'}`,
    content: { 'application/problem+json': { schema: ref('Problem') } },
  };
}

function operation(route: Route) {
  const contract = contracts[route.operationId as OperationId];
  const gatewayStatuses = route.scopes ? [401, 403, 413, 429, 500] : [429, 500];
  const statuses = [...new Set([...contract.errors, ...gatewayStatuses])].sort((a, b) => a - b);
  const success = contract.success;
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.scopes
      ? {
          security: [{ bearerAuth: [...route.scopes] }],
          description: `Requires the scope${route.scopes.length > 1 ? 's' : ''} ${route.scopes.join(', ')}.`,
        }
      : { security: [] }),
    ...(contract.parameters ? { parameters: contract.parameters } : {}),
    ...(contract.requestBody
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref(contract.requestBody) } },
          },
        }
      : {}),
    responses: {
      [success.status]: {
        description: success.description,
        content: success.mediaTypes
          ? Object.fromEntries(success.mediaTypes.map((type) => [type, { schema: { type: 'string' } }]))
          : { 'application/json': { schema: success.schema ? ref(success.schema) : { type: 'object' } } },
      },
      ...Object.fromEntries(statuses.map((status) => [status, problemResponse(status)])),
    },
  };
}

/**
 * The OpenAPI 3.1 document, assembled from the route table, the JSON Schemas and the error
 * tables: the same sources the service runs on, so it cannot describe another API.
 */
export function buildOpenApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Wallet & Catalog API',
      version: '1.0.0',
      description:
        'Swagger Petstore v3 addPet/getPetById and a wallet with exactly-once transfers. Every error is RFC 9457 application/problem+json.',
    },
    // Relative to where the document is served (`<base>/api/openapi.json`): `..` is `<base>/`, so
    // the reference page and any tool reading the document from the API call that same API, on a
    // stage URL, a custom domain or the local gateway alike.
    servers: [{ url: '..', description: 'The API serving this document' }],
    paths,
    components: {
      schemas: Object.fromEntries(schemas.map((schema) => [schema.$id, withoutIds(schema)])),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `OAuth 2.0 JWT access token. Scopes (claim \`scope\`, space-separated, or \`scp\` array): ${Object.entries(
            SCOPES,
          )
            .map(([scope, meaning]) => `${scope}: ${meaning}`)
            .join('; ')}.`,
        },
      },
    },
  };
}
