import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureTables, localClient } from '#infra/local/dynamodb-local.ts';
import { createTableInput, tables } from '#shared/dynamodb/tables.ts';

const endpoint = inject('env').DYNAMODB_ENDPOINT as string;
const client = localClient(endpoint);
afterAll(() => client.destroy());

describe('the local tables', () => {
  it('gives a table kept from an earlier version (npm start -- --persist) the indexes it lacks', async () => {
    const [first, ...later] = tables.wallets.indexes ?? [];
    if (!first || later.length === 0) throw new Error('the wallets table has fewer than two indexes');
    // Two stacks' tables as a version with only the first index created them, brought up to date
    // at once: each lacks two indexes, and DynamoDB Local builds one index of a table at a time.
    const prefixes = [1, 2].map((n) => `kept-${n}-${randomUUID().slice(0, 8)}`);
    for (const prefix of prefixes) {
      await client.send(
        new CreateTableCommand(
          createTableInput(`${prefix}-wallets`, { ...tables.wallets, indexes: [first] }),
        ),
      );
    }

    const envs = await Promise.all(prefixes.map((prefix) => ensureTables(endpoint, prefix)));

    for (const env of envs) {
      const { Table } = await client.send(
        new DescribeTableCommand({ TableName: env[tables.wallets.envVar] }),
      );
      expect(
        Table?.GlobalSecondaryIndexes?.map((index) => [index.IndexName, index.IndexStatus]).sort(),
      ).toEqual((tables.wallets.indexes ?? []).map((index) => [index.name, 'ACTIVE']).sort());
    }
  });
});
