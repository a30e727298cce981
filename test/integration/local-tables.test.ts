import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DynamoDbLocal,
  ensureTables,
  localClient,
  startDynamoDbLocal,
} from '#infra/local/dynamodb-local.ts';
import { createTableInput, tables } from '#shared/dynamodb/tables.ts';

/*
 * A DynamoDB Local of its own, as `npm start -- --persist` has at start-up: on the suite's shared
 * one, busy with every other test's transactions, an index was still not active after a minute.
 */
let dynamodb: DynamoDbLocal;
let client: ReturnType<typeof localClient>;
beforeAll(async () => {
  dynamodb = await startDynamoDbLocal();
  client = localClient(dynamodb.endpoint);
}, 60_000);
afterAll(async () => {
  client?.destroy();
  await dynamodb?.stop();
});

describe('the local tables', () => {
  it('gives a table kept from an earlier version (npm start -- --persist) the indexes it lacks', async () => {
    const [first, ...later] = tables.wallets.indexes ?? [];
    if (later.length < 2 || !first) throw new Error('the wallets table has fewer than three indexes');
    // The table as a version with only the first index created it: it lacks two, and DynamoDB
    // Local, like DynamoDB, builds one index of a table at a time.
    const prefix = `kept-${randomUUID().slice(0, 8)}`;
    await client.send(
      new CreateTableCommand(createTableInput(`${prefix}-wallets`, { ...tables.wallets, indexes: [first] })),
    );

    const env = await ensureTables(dynamodb.endpoint, prefix);

    const { Table } = await client.send(new DescribeTableCommand({ TableName: env[tables.wallets.envVar] }));
    expect(
      Table?.GlobalSecondaryIndexes?.map((index) => [index.IndexName, index.IndexStatus]).sort(),
    ).toEqual((tables.wallets.indexes ?? []).map((index) => [index.name, 'ACTIVE']).sort());
  });
});
