import { INVALID_TOKEN_CHALLENGE, insufficientScopeChallenge } from './http/bearer-challenge.ts';
import { errorMappings, internalErrorMapping } from './http/error-mapping.ts';
import { FORM_MEDIA_TYPE } from './http/form-body.ts';
import { gatewayResponses } from './http/gateway-responses.ts';
import { METHOD_NOT_ALLOWED } from './http/method-not-allowed.ts';
import { problemType } from './http/problem.ts';
import type { HeaderUse } from './openapi-contract.ts';
import { operationContracts } from './openapi-operations.ts';
import { webhookDescriptions } from './openapi-webhooks.ts';
import { type OperationId, type Route, routes, SCOPES } from './routes.ts';
import { schemas } from './schemas/index.ts';
import { petSchema } from './schemas/pet.ts';
import { requestedAmountSchema } from './schemas/wallet.ts';
import { MAX_AMOUNT_TEXT_LENGTH } from './wallet/model/money.ts';

/** The money settings of the deployment the document describes (`infra/environment.ts`). */
export interface DocumentedMoney {
  readonly currency: string;
  readonly currencyDecimals: number;
  readonly maxTransferMinor: number;
}

/** `$id` identifies a schema to ajv; inside an OpenAPI document the component name does that. */
function withoutIds(value: unknown, amount: object): unknown {
  // The amount as the function checks it, with this deployment's bounds (see `documentedAmount`).
  if (value === requestedAmountSchema) return amount;
  if (Array.isArray(value)) return value.map((item) => withoutIds(item, amount));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== '$id')
      .map(([k, v]) => [k, withoutIds(v, amount)]),
  );
}

/**
 * The amount as the function checks it on the JSON text (`shared/wallet/model/money.ts`): at most the
 * per-transfer maximum, at most the currency's decimals, at most 32 characters of number text.
 * No `multipleOf`: `0.01` is no binary float, so validators reading the parsed number refuse
 * valid amounts such as 1.13 (1.13 / 0.01 = 112.99999999999999); the decimals are stated in
 * `x-decimals` and the description instead.
 */
function documentedAmount(money: DocumentedMoney) {
  const unit = 10 ** money.currencyDecimals;
  return {
    ...requestedAmountSchema,
    // Checked on the JSON text, with the rest, by the send function's edge (`parseAmount`).
    exclusiveMinimum: 0,
    maximum: money.maxTransferMinor / unit,
    description: `Amount in ${money.currency}, an exact decimal with at most ${money.currencyDecimals} decimals, more than 0 and at most ${money.maxTransferMinor / unit}, written in at most ${MAX_AMOUNT_TEXT_LENGTH} characters of JSON number text`,
    'x-decimals': money.currencyDecimals,
    'x-max-text-length': MAX_AMOUNT_TEXT_LENGTH,
  };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Status and problem slug of each answer API Gateway gives itself for an operation's request. */
function gatewayProblems(route: Route): [number, string][] {
  const all: [number, string][] = [
    [413, 'payload-too-large'],
    [429, 'throttled'],
    // DEFAULT_5XX keeps API Gateway's status: a failed function, a timeout.
    [500, 'gateway-error'],
    [502, 'gateway-error'],
    [504, 'gateway-error'],
  ];
  // A token the authorizer could not check, its identity provider down: 503 with Retry-After.
  const authorized: [number, string][] = [
    [401, 'unauthorized'],
    [403, 'insufficient-scope'],
    [503, 'temporarily-unavailable'],
  ];
  return route.scopes ? [...all, ...authorized] : all;
}

/** The title of a problem slug, from the tables the service and the gateway answer with. */
function titleOf(slug: string): string {
  const mapping =
    errorMappings.find(([, m]) => m.slug === slug)?.[1] ??
    gatewayResponses.find((r) => r.slug === slug) ??
    (slug === internalErrorMapping.slug ? internalErrorMapping : undefined) ??
    (slug === METHOD_NOT_ALLOWED.slug ? METHOD_NOT_ALLOWED : undefined);
  if (!mapping) throw new Error(`Unknown problem type ${slug}`);
  return mapping.title;
}

function statusOf(slug: string): number {
  const mapping = errorMappings.find(([, m]) => m.slug === slug)?.[1];
  if (!mapping) throw new Error(`${slug} is no problem a function answers with`);
  return mapping.status;
}

/** Headers sent with a problem of a status: the challenge of RFC 6750, and when to retry. */
const problemHeaders: Record<number, readonly HeaderUse[]> = {
  401: [{ name: 'WWW-Authenticate', required: true }],
  403: [{ name: 'WWW-Authenticate', required: true }],
  // Sent by the per-caller limit; API Gateway's stage throttling sends none.
  429: [{ name: 'Retry-After', required: false }],
  503: [{ name: 'Retry-After', required: true }],
};

/** Headers sent with one problem type only, on whichever operation answers it. */
const problemTypeHeaders: Record<string, readonly HeaderUse[]> = {
  // The endpoint the Idempotency-Key registered before, while it exists.
  'webhook-endpoint-registered': [{ name: 'Location', required: false }],
};

const headerObjects: Record<HeaderUse['name'], object> = {
  'WWW-Authenticate': {
    description:
      "The bearer challenge (RFC 6750 §3): `invalid_token` on a 401; `insufficient_scope` on a 403, with the operation's scopes when the function answers (the gateway's own 403 names none)",
    schema: { type: 'string' },
    example: INVALID_TOKEN_CHALLENGE,
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    schema: { type: 'string', pattern: '^[0-9]+$' },
    example: '1',
  },
  'Idempotent-Replayed': {
    description:
      'Present (`true`) when the answer is the stored outcome of an earlier request with this Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
  Location: {
    description:
      'The created resource, relative to the request URL (on a 409 webhook-endpoint-registered: the endpoint the Idempotency-Key registered)',
    schema: { type: 'string' },
    example: 'webhooks/whep_Q2hlY2tvdXRIb29rczAx',
  },
  Allow: {
    description: 'The methods the path is served with',
    schema: { type: 'string' },
    example: 'GET, OPTIONS',
  },
  ETag: {
    description:
      "The pet's revision, a strong entity-tag: send it in If-Match to change the pet only if it is still so",
    schema: { type: 'string' },
    example: '"k3pX0vQ9cT2mWbYd"',
  },
  // No general example: each operation's cursor is its own (openapi-pet-operations.ts).
  Link: {
    description:
      'The next page (RFC 8288), as a reference relative to this request: `<?…&cursor=…>; rel="next"`',
    schema: { type: 'string' },
  },
};

const headersOf = (headers: readonly HeaderUse[] | undefined) =>
  headers && headers.length > 0
    ? {
        headers: Object.fromEntries(
          headers.map((h) => [
            h.name,
            {
              ...headerObjects[h.name],
              ...(h.example === undefined ? {} : { example: h.example }),
              required: h.required,
            },
          ]),
        ),
      }
    : {};

/**
 * A problem+json answer whose `type` is one of `slugs` and whose `status` is `status`; `examples`
 * are the operation's own header examples (a 403's challenge names its scopes).
 */
function problemResponse(
  status: number,
  slugs: readonly string[],
  examples: Partial<Record<HeaderUse['name'], string>> = {},
) {
  const types = [...new Set(slugs)].sort().map(problemType);
  const headers = [
    ...(problemHeaders[status] ?? []),
    ...[...new Set(slugs)].flatMap((slug) => problemTypeHeaders[slug] ?? []),
  ].map((h) => (examples[h.name] === undefined ? h : { ...h, example: examples[h.name] }));
  return {
    description: `Problem details. Types: ${[...new Set(slugs)].map((slug) => `${problemType(slug)} (${titleOf(slug)})`).join('; ')}`,
    ...headersOf(headers),
    content: {
      'application/problem+json': {
        schema: {
          allOf: [ref('Problem'), { properties: { type: { enum: types }, status: { const: status } } }],
        },
      },
    },
  };
}

function operation(route: Route) {
  const contract = operationContracts[route.operationId as OperationId];
  const problems: [number, string][] = [
    ...contract.problems.map((slug): [number, string] => [statusOf(slug), slug]),
    // Every function re-checks the caller of a protected route (its Authorization header sent
    // once, as a body's Content-Type: docs/decisions/repeated-headers.md), and answers 500 for the
    // unexpected.
    ...(route.scopes
      ? ([
          [400, 'invalid-parameter'],
          [401, 'unauthorized'],
          [403, 'insufficient-scope'],
        ] as [number, string][])
      : []),
    [500, internalErrorMapping.slug],
    // The path with a trailing slash, which API Gateway routes here (shared/http/canonical-path.ts).
    [404, 'not-found'],
    ...gatewayProblems(route),
  ];
  const byStatus = new Map<number, string[]>();
  for (const [status, slug] of problems) byStatus.set(status, [...(byStatus.get(status) ?? []), slug]);
  const success = contract.success;
  const scopes = route.scopes ?? [];
  // What this operation's function sends (shared/http/problem-middleware.ts), not another's.
  const challenges: Record<number, Partial<Record<HeaderUse['name'], string>>> = {
    401: { 'WWW-Authenticate': INVALID_TOKEN_CHALLENGE },
    403: { 'WWW-Authenticate': insufficientScopeChallenge(scopes) },
  };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [contract.tag],
    // Scopes are named in the description: an http bearer scheme takes none (OpenAPI 3.1 §4.8.30).
    ...(route.scopes
      ? {
          security: [{ bearerAuth: [] }],
          description: `Requires a bearer token with the scope${scopes.length > 1 ? 's' : ''} ${scopes.join(', ')}.`,
        }
      : { security: [], description: 'Public: no token.' }),
    ...(contract.parameters ? { parameters: contract.parameters } : {}),
    ...(contract.requestBody
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              (contract.requestMediaTypes ?? ['application/json']).map((type) => [
                type,
                { schema: ref(contract.requestBody as string), example: contract.requestExample },
              ]),
            ),
          },
        }
      : {}),
    ...(contract.requestBytes
      ? {
          requestBody: {
            required: true,
            description: contract.requestBytes.description,
            content: Object.fromEntries(
              contract.requestBytes.mediaTypes.map((type) => [
                type,
                { schema: { type: 'string', format: 'binary' } },
              ]),
            ),
          },
        }
      : {}),
    ...(contract.requestForm
      ? {
          requestBody: {
            required: false,
            description: contract.requestForm.description,
            content: {
              [FORM_MEDIA_TYPE]: {
                schema: {
                  type: 'object',
                  properties: contract.requestForm.properties,
                  additionalProperties: false,
                },
              },
            },
          },
        }
      : {}),
    responses: {
      [success.status]: {
        description: success.description,
        ...headersOf(success.headers),
        // 204 No Content has none.
        ...(success.status === 204
          ? {}
          : {
              content: success.mediaTypes
                ? Object.fromEntries(
                    success.mediaTypes.map((type) => [
                      type,
                      success.binary
                        ? { schema: { type: 'string', format: 'binary' } }
                        : { schema: { type: 'string' }, example: success.example },
                    ]),
                  )
                : {
                    'application/json': {
                      schema: success.schema
                        ? success.array
                          ? { type: 'array', items: ref(success.schema) }
                          : ref(success.schema)
                        : { type: 'object' },
                      example: success.example,
                    },
                  },
            }),
      },
      ...Object.fromEntries(
        [...byStatus]
          .sort(([a], [b]) => a - b)
          .map(([status, slugs]) => [status, problemResponse(status, slugs, challenges[status])]),
      ),
    },
  };
}

/**
 * What the gateway answers for a request no operation serves: the path is unknown (404), or the
 * path is known but not with that method (405, with the methods it is served with in `Allow`).
 */
function gatewayOnlyResponses() {
  return {
    NoSuchRoute: problemResponse(404, ['no-such-route']),
    MethodNotAllowed: {
      ...problemResponse(405, ['method-not-allowed']),
      ...headersOf([{ name: 'Allow', required: true }]),
    },
  };
}

/**
 * The OpenAPI 3.1 document, assembled from the route table, the JSON Schemas and the error
 * tables: the same sources the service runs on, so it cannot describe another API.
 */
export function buildOpenApiDocument(money: DocumentedMoney) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  const amount = documentedAmount(money);
  // `Address` alone is the authorizer's check of `sub`; in the document it travels inside the bodies.
  const components = Object.fromEntries(
    schemas
      .filter((schema) => schema.$id !== 'Address')
      .map((schema) => [schema.$id, withoutIds(schema, amount)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Wallet & Catalog API',
      version: '1.0.0',
      description:
        'The Swagger Petstore v3 pet resource (with ETags, If-Match and bounded, paged searches) and a wallet with exactly-once transfers. Every error is RFC 9457 application/problem+json. String lengths count Unicode code points. A path no operation serves answers 404 (no-such-route); a method a path is not served with, 405 with `Allow`.',
      contact: { name: 'Wallet & Catalog API maintainers' },
      license: { name: 'Apache 2.0', identifier: 'Apache-2.0' },
    },
    // Relative to where the document is served (`<base>/api/openapi.json`): `..` is `<base>/`, so
    // the reference page and any tool reading the document from the API call that same API, on a
    // stage URL, a custom domain or the local gateway alike.
    servers: [{ url: '..', description: 'The API serving this document' }],
    tags: [
      { name: 'pet', description: 'The pet catalog (the Swagger Petstore v3 pet resource)' },
      { name: 'wallet', description: "The caller's wallet and transfers" },
      {
        name: 'webhooks',
        description:
          "The caller's webhook endpoints: events of its wallet POSTed as Standard Webhooks 1.0 (signed with `webhook-id`, `webhook-timestamp`, `webhook-signature`; verify with the `standardwebhooks` library)",
      },
      { name: 'reference', description: 'This document and its interactive reference page' },
    ],
    paths,
    // What the service POSTs to a merchant's endpoints (OpenAPI 3.1).
    webhooks: webhookDescriptions(),
    // Not under `components`: no operation references them, they answer requests outside any operation.
    'x-gateway-responses': gatewayOnlyResponses(),
    components: {
      schemas: {
        ...components,
        // A pet as answered: the server always assigns and returns its id.
        StoredPet: { ...(withoutIds(petSchema, amount) as object), required: [...petSchema.required, 'id'] },
      },
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
