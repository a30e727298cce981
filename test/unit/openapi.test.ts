import { describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '#infra/environment.ts';
import { openApiJson } from '#shared/openapi.generated.js';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routes } from '#shared/routes.ts';

interface DocumentedOperation {
  readonly requestBody?: object;
  readonly responses: Record<string, { description: string }>;
}
const paths = buildOpenApiDocument(defaultServiceSettings).paths as Record<
  string,
  Record<string, DocumentedOperation>
>;

describe('the OpenAPI document the openapi function serves', () => {
  it('is the document assembled from the route, schema and error tables (npm run generate is current)', () => {
    expect(openApiJson).toBe(JSON.stringify(buildOpenApiDocument(defaultServiceSettings)));
  });

  it('documents 503 for every operation that calls DynamoDB (its bounded retries end there)', () => {
    for (const route of routes.filter((r) => 'data' in r)) {
      const documented = Object.keys(paths[route.path]?.[route.method.toLowerCase()]?.responses ?? {});
      expect(documented, route.operationId).toContain('503');
    }
  });

  it('documents the invalid-parameter 400 for every operation that takes a body (its Content-Type sent once)', () => {
    const operations = Object.values(paths).flatMap((methods) => Object.values(methods));
    const withBody = operations.filter((operation) => operation.requestBody !== undefined);
    expect(withBody.length).toBeGreaterThan(0);
    for (const operation of withBody) {
      expect(operation.responses['400']?.description).toContain('invalid-parameter');
    }
  });
});
