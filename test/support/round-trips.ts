import { expect } from 'vitest';
import type { ProxiedRequest } from '#infra/local/dynamodb-faults.ts';
import type { DynamoDbProxy } from '#infra/local/dynamodb-proxy.ts';
import { type OperationId, routeOf } from '#shared/routes.ts';

/*
 * DynamoDB round trips per request, counted at the transport (the round-trips tests): the
 * functions, built through their composition roots, talk to DynamoDB Local through the fault proxy
 * (no fault injected), which records every request that really left the SDK — after its retry
 * middleware, so a retry after an answer (a throttle, a conflict) would count; one after its own
 * timeout, which a loaded DynamoDB Local causes, does not.
 */

/** The IAM action of each kind of transaction item. */
const ITEM_ACTION: Readonly<Record<string, string>> = {
  Get: 'dynamodb:GetItem',
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

/**
 * The IAM actions one request on the wire needs. Most operations are authorised by the action of
 * their own name (BatchGetItem by dynamodb:BatchGetItem, a Query on an index by dynamodb:Query on
 * the index's resource); transactions by the actions of their items instead.
 */
function actionsOf({ operation, body }: ProxiedRequest): string[] {
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const items = (JSON.parse(body) as { TransactItems: Record<string, unknown>[] }).TransactItems;
    return items.flatMap((item) => Object.keys(item).map((kind) => ITEM_ACTION[kind] ?? `unknown ${kind}`));
  }
  return [`dynamodb:${operation}`];
}

/**
 * The DynamoDB operations one request sent through `proxy`, by name, after checking that it
 * answered `status` and its calls against the route's IAM grant: by default that the grant is
 * exactly the set of actions they needed (neither a denied call on AWS nor an unused permission);
 * with `part`, that it covers them (a path that needs only some of the grant, the rest being proved
 * by another case of the same route). The tests of a file run one at a time, and nothing else in
 * it goes through its proxy.
 */
export function roundTripCounter(proxy: DynamoDbProxy) {
  return async function roundTripsOf(
    operationId: OperationId,
    request: () => Promise<{ statusCode: number }>,
    { part = false, status = 200 } = {},
  ): Promise<string[]> {
    const before = proxy.requests().length;
    const response = await request();
    expect(response.statusCode).toBe(status);
    // Not one the SDK sent again once its request timeout fired: DynamoDB Local's pace, not the code's.
    const sent = proxy
      .requests()
      .slice(before)
      .filter((one) => !one.abandoned);
    const needed = [...new Set(sent.flatMap(actionsOf))].sort();
    const granted = [...(routeOf(operationId).data?.actions ?? [])].sort();
    if (part) expect(granted).toEqual(expect.arrayContaining(needed));
    else expect(needed).toEqual(granted);
    return sent.map((request) => request.operation);
  };
}
