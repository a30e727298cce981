/**
 * The contract check every response of the end-to-end suite goes through (`call` in `http.ts`):
 * the status is one the OpenAPI document declares for the operation, with a declared media type,
 * a body valid against the declared schema and every header it declares required. A request no
 * operation serves is checked against the gateway's documented answers (`x-gateway-responses`).
 */
import { Ajv } from 'ajv';
import { expect } from 'vitest';
import { JWKS_PATH } from '#infra/local/issuer.ts';
import { Router, requestTarget } from '#infra/local/router.ts';
import { openApiJson } from '#shared/openapi.generated.js';
import { routes } from '#shared/routes.ts';

interface MediaType {
  readonly schema?: object;
}
interface DocumentedResponse {
  readonly headers?: Record<string, { readonly required?: boolean }>;
  readonly content?: Record<string, MediaType>;
}
interface Operation {
  readonly responses: Record<string, DocumentedResponse>;
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly 'x-gateway-responses': Record<'NoSuchRoute' | 'MethodNotAllowed', DocumentedResponse>;
}

/** What is checked of a response. */
export interface ObservedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly json: unknown;
  readonly text: string;
}

const document = JSON.parse(openApiJson) as Document;
const DOCUMENT_ID = 'openapi.json';
// Not strict: the document carries OpenAPI keywords (`example`) and extensions (`x-decimals`).
// Lengths count code points and `pattern` is Unicode, as in the validators the functions run.
const ajv = new Ajv({ strict: false, allErrors: true, formats: { int64: true, 'date-time': true } });
ajv.addSchema(document, DOCUMENT_ID);
const router = new Router(routes);
const validators = new Map<string, ReturnType<Ajv['compile']>>();

const pointer = (...tokens: string[]) =>
  tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

function validatorAt(jsonPointer: string) {
  let validate = validators.get(jsonPointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${jsonPointer}` });
    validators.set(jsonPointer, validate);
  }
  return validate;
}

/** Checks one response against the documented one at `location` (a JSON pointer into the document). */
function expectDocumented(
  method: string,
  what: string,
  documented: DocumentedResponse,
  location: string,
  response: ObservedResponse,
): void {
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    if (header.required) expect(response.headers.has(name), `${what}: header ${name} is declared`).toBe(true);
  }
  const contentType = response.headers.get('content-type')?.split(';')[0]?.trim();
  const declared = Object.keys(documented.content ?? {});
  if (declared.length === 0) return;
  expect(declared, `${what}: media type ${contentType} is declared`).toContain(contentType);
  const media = documented.content?.[contentType as string];
  // A HEAD answer has the headers of the GET it stands for, and no body.
  if (media?.schema === undefined || method === 'HEAD') return;
  const validate = validatorAt(`${location}${pointer('content', contentType as string, 'schema')}`);
  const body = response.json === undefined ? response.text : response.json;
  expect(validate(body) ? [] : validate.errors, `${what}: body ${response.text.slice(0, 500)}`).toEqual([]);
}

/** Asserts that `response`, the answer to `method target`, is one the document declares. */
export function expectAsDocumented(method: string, target: string, response: ObservedResponse): void {
  const { path } = requestTarget(target);
  const what = `${method} ${target} → ${response.status}`;
  // The local issuer's keys: served by the local gateway only, no part of the API.
  if (path === JWKS_PATH) return;
  const matched = router.match(method, path);
  if (matched) {
    const operationPath = pointer('paths', matched.route.path, matched.route.method.toLowerCase());
    const operation = document.paths[matched.route.path]?.[matched.route.method.toLowerCase()] as Operation;
    const status = String(response.status);
    expect(
      Object.keys(operation.responses),
      `${what}: status declared for ${matched.route.operationId}`,
    ).toContain(status);
    expectDocumented(
      method,
      what,
      operation.responses[status] as DocumentedResponse,
      `${operationPath}${pointer('responses', status)}`,
      response,
    );
    return;
  }
  const gateway = document['x-gateway-responses'];
  if (router.resourceOf(path) === undefined) {
    // Throttling comes before routing; anything else on an unknown path is the one 404.
    if (response.status === 429) return;
    expect(response.status, what).toBe(404);
    expectDocumented(
      method,
      what,
      gateway.NoSuchRoute,
      pointer('x-gateway-responses', 'NoSuchRoute'),
      response,
    );
  } else if (method === 'OPTIONS' && response.status === 204) {
    // A CORS preflight: no body, the allowed methods.
    expect(response.headers.get('access-control-allow-methods'), what).toMatch(/OPTIONS/);
  } else if (response.status !== 429) {
    expect(response.status, what).toBe(405);
    expectDocumented(
      method,
      what,
      gateway.MethodNotAllowed,
      pointer('x-gateway-responses', 'MethodNotAllowed'),
      response,
    );
  }
}
