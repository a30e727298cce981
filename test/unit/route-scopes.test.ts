import { describe, expect, it } from 'vitest';
import { ROUTE_SCOPES } from '#shared/route-scopes.generated.js';
import { routes } from '#shared/routes.ts';

describe('the scopes a function re-checks behind the authorizer', () => {
  it('are, for every operation, the scopes the route table names, and name no other operation', () => {
    expect(Object.keys(ROUTE_SCOPES).sort()).toEqual(routes.map((r) => r.operationId).sort());
    for (const route of routes) expect(ROUTE_SCOPES[route.operationId]).toEqual(route.scopes);
  });
});
