import { describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '#infra/environment.ts';
import { InsufficientScopeError, UnauthenticatedError } from '#shared/errors.ts';
import { gatewayResponses } from '#shared/http/gateway-responses.ts';
import type { HttpRequest } from '#shared/http/handler.ts';
import { problemErrorHandler } from '#shared/http/problem-middleware.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { makeFindPetsByStatus, makeFindPetsByTags } from '#shared/pets/find-pets.ts';
import { cursorOf, limitOf, statusesOf, tagsOf } from '#shared/pets/pet-http.ts';
import { routes } from '#shared/routes.ts';
import { RETRY_AFTER_STATUSES } from '#shared/webhooks/model/retry-schedule.ts';
import { inMemoryPets } from './fakes/in-memory-pets.ts';

/*
 * The document's examples against what the code does: an example a client copies must be an
 * answer the operation can give, or a request it takes.
 */

interface Header {
  readonly example?: string;
}
interface Response {
  readonly description: string;
  readonly headers?: Record<string, Header>;
  readonly content?: Record<string, { schema?: { $ref?: string }; example?: unknown }>;
}
interface Operation {
  readonly operationId: string;
  readonly parameters?: readonly { name: string; in: string }[];
  readonly requestBody?: { content: Record<string, { schema?: { $ref?: string }; example?: unknown }> };
  readonly responses: Record<string, Response>;
}

const document = buildOpenApiDocument(defaultServiceSettings);
const operations = Object.values(document.paths as Record<string, Record<string, Operation>>).flatMap(
  (methods) => Object.values(methods),
);
const operation = (operationId: string) =>
  operations.find((op) => op.operationId === operationId) as Operation;

/** The query as the search functions read it (shared/http/handler.ts). */
const requestOf = (query: URLSearchParams) =>
  ({
    query: Object.fromEntries(query),
    queryValues: (name: string) => query.getAll(name),
  }) as unknown as HttpRequest<unknown>;

/** Each search, from its query through the function's own parsing and cursor decoding, over no pets. */
const searches: Record<string, (query: URLSearchParams) => Promise<unknown>> = {
  findPetsByStatus: (query) => {
    const request = requestOf(query);
    const find = makeFindPetsByStatus({ index: inMemoryPets().index });
    return find({ statuses: statusesOf(request), limit: limitOf(request), cursor: cursorOf(request) });
  },
  findPetsByTags: (query) => {
    const request = requestOf(query);
    const find = makeFindPetsByTags({ index: inMemoryPets().index });
    return find({ tags: tagsOf(request), limit: limitOf(request), cursor: cursorOf(request) });
  },
};

/** The `WWW-Authenticate` the functions send with an error (shared/http/problem-middleware.ts). */
function challengeOf(error: Error): string | undefined {
  const request = { error, event: { requestContext: { requestId: 'example' } } } as unknown as Parameters<
    NonNullable<ReturnType<typeof problemErrorHandler>['onError']>
  >[0];
  problemErrorHandler().onError?.(request);
  return (request.response as { headers?: Record<string, string> } | undefined)?.headers?.[
    'www-authenticate'
  ];
}

describe('the OpenAPI examples', () => {
  it("each Link example names only its operation's query parameters, and its cursor is taken by that operation's search", async () => {
    const linked = operations.filter((op) => op.responses['200']?.headers?.Link !== undefined);
    expect(linked.map((op) => op.operationId).sort()).toEqual(Object.keys(searches).sort());
    for (const op of linked) {
      const link = op.responses['200']?.headers?.Link?.example ?? '';
      const target = /^<\?([^>]+)>; rel="next"$/.exec(link)?.[1];
      expect(target, op.operationId).toBeDefined();
      const query = new URLSearchParams(target);
      const names = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      for (const name of query.keys()) expect(names, `${op.operationId} ${link}`).toContain(name);
      expect(query.get('cursor'), op.operationId).not.toBeNull();
      await expect(searches[op.operationId]?.(query), `${op.operationId} ${link}`).resolves.toBeDefined();
    }
  });

  it("each 401 and 403 example is the challenge the operation's function sends, or the gateway's", () => {
    const gateway = (status: number) =>
      gatewayResponses.find((response) => response.status === status)?.headers?.['WWW-Authenticate'];
    const protectedRoutes = routes.filter((route) => route.scopes);
    expect(protectedRoutes.length).toBeGreaterThan(0);
    for (const route of protectedRoutes) {
      const { responses } = operation(route.operationId);
      const example = (status: string) => responses[status]?.headers?.['WWW-Authenticate']?.example;
      const unauthenticated = challengeOf(new UnauthenticatedError('no token'));
      expect(unauthenticated).toBe(gateway(401));
      expect(example('401'), route.operationId).toBe(unauthenticated);
      expect(
        [challengeOf(new InsufficientScopeError(route.scopes ?? [])), gateway(403)],
        route.operationId,
      ).toContain(example('403'));
    }
  });

  it('an answer that is its request body as stored has the request example as its example', () => {
    const echoing = operations.filter(
      (op) =>
        op.requestBody?.content['application/json']?.schema?.$ref === '#/components/schemas/Pet' &&
        op.responses['200']?.content?.['application/json']?.schema?.$ref === '#/components/schemas/StoredPet',
    );
    expect(echoing.map((op) => op.operationId).sort()).toEqual(['addPet', 'updatePet']);
    for (const op of echoing) {
      expect(op.responses['200']?.content?.['application/json']?.example, op.operationId).toEqual(
        op.requestBody?.content['application/json']?.example,
      );
    }
  });

  it("each webhook's description says which answers' Retry-After is honoured, and that redirects are not followed", () => {
    const webhooks = Object.values(document.webhooks as Record<string, { post: { description: string } }>);
    expect(webhooks.length).toBeGreaterThan(0);
    for (const { post } of webhooks) {
      expect(post.description).toContain('Retry-After');
      for (const status of RETRY_AFTER_STATUSES) expect(post.description).toContain(String(status));
      expect(post.description).toMatch(/redirects are not followed/i);
    }
  });
});
