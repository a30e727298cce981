import { describe, expect, it } from 'vitest';
import { type Route, routes } from '#shared/routes.ts';
import { END_TO_END_ROUTES, WITHOUT_END_TO_END } from '../../bench/e2e-routes.ts';
import { DYNAMODB_CALLS, routeRequest, successStatus } from '../../bench/workload.ts';

/*
 * `npm run bench` judges every route: each needs a request, its DynamoDB calls (the floor's and the
 * cost model's; the integration round-trips tests assert them at the proxy) and a place in the
 * end-to-end stage, or a stated reason to have none. A route added to the table fails here, not
 * halfway through a 10-minute run.
 */
describe('the benchmark covers every route of the route table', () => {
  it.each(routes.map((route: Route) => [route.functionDir, route] as const))('%s', (dir, route) => {
    const request = routeRequest(dir, 'bench-caller', 'token');
    expect(request.method).toBe(route.method);
    expect(request.resource).toBe(route.path);
    expect([200, 201, 202, 204]).toContain(successStatus(dir));
    const calls = DYNAMODB_CALLS[dir];
    expect(calls).toBeDefined();
    // A route without a table makes no call; a route with one makes at least one.
    expect((calls ?? []).length > 0).toBe(route.data !== undefined);
    // Each call is one the route's grant allows (a transaction by its items' actions, which the
    // round-trips tests check on the wire).
    for (const call of calls ?? []) {
      if (call !== 'TransactWriteItems') expect(route.data?.actions).toContain(`dynamodb:${call}`);
    }
    expect(END_TO_END_ROUTES.includes(dir)).toBe(WITHOUT_END_TO_END[dir] === undefined);
  });
});
