import { describe, expect, it } from 'vitest';
import { WORKER_GRANTS } from '#infra/worker-grants.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { type DataGrant, type Route, routes } from '#shared/routes.ts';

// Every function's one grant on a table, routes' and workers' alike: CDK grants a Query on exactly
// the indexes a grant names, so a name the table lacks or a forgotten one only fails on AWS.
const grants: [string, DataGrant][] = [
  ...(routes as readonly Route[]).flatMap((route): [string, DataGrant][] =>
    route.data ? [[route.operationId, route.data]] : [],
  ),
  ...WORKER_GRANTS.map((grant, n): [string, DataGrant] => [`worker ${n}`, grant]),
];

describe('the data grants', () => {
  it.each(grants)('%s names only indexes of its table, and only with a Query', (_, grant) => {
    const known = (tables[grant.table].indexes ?? []).map((index) => index.name);
    expect(known).toEqual(expect.arrayContaining([...(grant.indexes ?? [])]));
    if (!grant.actions.includes('dynamodb:Query')) expect(grant.indexes ?? []).toEqual([]);
  });

  it.each(grants.filter(([, grant]) => grant.actions.includes('dynamodb:Query')))(
    '%s, which queries, names the indexes it queries',
    (_, grant) => {
      expect(grant.indexes?.length).toBeGreaterThan(0);
    },
  );
});
