import { describe, expect, it } from 'vitest';
import { openApiJson } from '#shared/openapi.generated.js';
import { buildOpenApiDocument } from '#shared/openapi.ts';

describe('the OpenAPI document the openapi function serves', () => {
  it('is the document assembled from the route, schema and error tables (npm run generate is current)', () => {
    expect(openApiJson).toBe(JSON.stringify(buildOpenApiDocument()));
  });
});
