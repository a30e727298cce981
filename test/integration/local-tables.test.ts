import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureTables, localClient } from '#infra/local/dynamodb-local.ts';
import { createTableInput, tables } from '#shared/dynamodb/tables.ts';

const endpoint = inject('env').DYNAMODB_ENDPOINT as string;
const client = localClient(endpoint);
afterAll(() => client.destroy());

describe('the local tables', () => {
  // DynamoDB Local builds an index in about a second when idle, several times that under the
  // whole suite's load.
  it('gives a table kept from an earlier version (npm start -- --persist) the indexes it lacks', {
    timeout: 60_000,
  }, async () => {
    const [first, ...later] = tables.wallets.indexes ?? [];
    if (later.length < 2 || !first) throw new Error('the wallets table has fewer than three indexes');
    // The table as a version with only the first index created it: it lacks two, and DynamoDB
    // Local, like DynamoDB, builds one index of a table at a time.
    const prefix = `kept-${randomUUID().slice(0, 8)}`;
    await client.send(
      new CreateTableCommand(createTableInput(`${prefix}-wallets`, { ...tables.wallets, indexes: [first] })),
    );

    const env = await ensureTables(endpoint, prefix);

    const { Table } = await client.send(new DescribeTableCommand({ TableName: env[tables.wallets.envVar] }));
    expect(
      Table?.GlobalSecondaryIndexes?.map((index) => [index.IndexName, index.IndexStatus]).sort(),
    ).toEqual((tables.wallets.indexes ?? []).map((index) => [index.name, 'ACTIVE']).sort());
  });
});
