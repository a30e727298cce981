import { describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '#infra/environment.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';

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

describe('the OpenAPI examples', () => {
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
});
