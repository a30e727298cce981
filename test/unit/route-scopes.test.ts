import { describe, expect, it } from 'vitest';
import { ROUTE_PATHS, ROUTE_SCOPES } from '#shared/route-scopes.generated.js';
import { routes } from '#shared/routes.ts';

describe('what a function reads of the route table at run time', () => {
  it('gives every operation the scopes the route table names, and names no other operation', () => {
    expect(Object.keys(ROUTE_SCOPES).sort()).toEqual(routes.map((r) => r.operationId).sort());
    for (const route of routes) expect(ROUTE_SCOPES[route.operationId]).toEqual(route.scopes);
  });

  it('gives every operation the path the route table names', () => {
    expect(Object.keys(ROUTE_PATHS).sort()).toEqual(routes.map((r) => r.operationId).sort());
    for (const route of routes) expect(ROUTE_PATHS[route.operationId]).toBe(route.path);
  });
});
