import { describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '#infra/environment.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routeOf } from '#shared/routes.ts';

describe('the OpenAPI document servers', () => {
  // Where the document is served: a deployed stage, a custom domain with a base path, the local gateway.
  const bases = [
    'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/',
    'https://api.example.com/wallet/',
    'http://127.0.0.1:3000/',
  ];

  it.each(bases)('resolve, against the document URL under %s, to that base, so paths land on it', (base) => {
    const [server, ...others] = buildOpenApiDocument(defaultServiceSettings).servers;
    expect(others).toEqual([]);
    const documentUrl = new URL(routeOf('getOpenApi').path.slice(1), base);
    expect(new URL(server?.url ?? '', documentUrl).href).toBe(base);
  });
});
