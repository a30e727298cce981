import { describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '#infra/environment.ts';
import { openApiJson } from '#shared/openapi.generated.js';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routes } from '#shared/routes.ts';

interface DocumentedOperation {
  readonly operationId: string;
  readonly requestBody?: object;
  readonly responses: Record<string, { description: string; headers?: Record<string, object> }>;
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

  it('documents a Location on a conflict only where the conflict names an endpoint registered before', () => {
    const operations = Object.values(paths).flatMap((methods) => Object.values(methods));
    const conflicts = operations.filter((operation) => operation.responses['409'] !== undefined);
    expect(conflicts.length).toBeGreaterThan(1);
    for (const { operationId, responses } of conflicts) {
      const conflict = responses['409'];
      expect(conflict?.headers?.Location !== undefined, operationId).toBe(
        conflict?.description.includes('webhook-endpoint-registered'),
      );
    }
  });
});
