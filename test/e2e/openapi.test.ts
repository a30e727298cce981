import { describe, expect, it } from 'vitest';
import { routes } from '#shared/routes.ts';
import { call } from './http.ts';

describe('GET /api/openapi.json', () => {
  it('serves the OpenAPI document without a token, with every route of the table', async () => {
    const result = await call('GET', '/api/openapi.json');
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('application/json');
    const document = result.json as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(document.openapi).toMatch(/^3\./);
    for (const route of routes) {
      expect(document.paths[route.path], route.path).toHaveProperty(route.method.toLowerCase());
    }
  });
});
