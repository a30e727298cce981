import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DYNAMODB_LOCAL_JAVA_OPTIONS,
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
/** This process's JAVA_TOOL_OPTIONS before DynamoDB Local started. */
const ownJavaOptions = process.env.JAVA_TOOL_OPTIONS;
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

/** The value of the variable `name` a process was started with (Linux), or undefined. */
async function startedWith(pid: number, name: string): Promise<string | undefined> {
  const environ = await readFile(`/proc/${pid}/environ`, 'utf8');
  const entry = environ.split('\0').find((line) => line.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

/** The JAVA_TOOL_OPTIONS a process was started with (Linux), or undefined. */
const javaOptionsOf = (pid: number) => startedWith(pid, 'JAVA_TOOL_OPTIONS');

describe('the JVM DynamoDB Local runs in', () => {
  it('gets the project’s options, this process’s own JAVA_TOOL_OPTIONS left as they were', async () => {
    const expected = process.env.DYNAMODB_LOCAL_JAVA_OPTIONS ?? DYNAMODB_LOCAL_JAVA_OPTIONS;
    const options = (await javaOptionsOf(dynamodb.pid)) ?? '';
    for (const option of expected.split(' ').filter(Boolean)) expect(options.split(' ')).toContain(option);
    expect(process.env.JAVA_TOOL_OPTIONS).toBe(ownJavaOptions);
  });

  it('keeps a developer’s JAVA_TOOL_OPTIONS, and takes DYNAMODB_LOCAL_JAVA_OPTIONS in place of the project’s', async () => {
    const saved = { tool: process.env.JAVA_TOOL_OPTIONS, local: process.env.DYNAMODB_LOCAL_JAVA_OPTIONS };
    process.env.JAVA_TOOL_OPTIONS = '-Dwallet.developer=yes';
    process.env.DYNAMODB_LOCAL_JAVA_OPTIONS = '-Dwallet.local=yes';
    let other: DynamoDbLocal | undefined;
    try {
      other = await startDynamoDbLocal();
      expect(await javaOptionsOf(other.pid)).toBe('-Dwallet.developer=yes -Dwallet.local=yes');
      expect(process.env.JAVA_TOOL_OPTIONS).toBe('-Dwallet.developer=yes');
    } finally {
      for (const [name, value] of [
        ['JAVA_TOOL_OPTIONS', saved.tool],
        ['DYNAMODB_LOCAL_JAVA_OPTIONS', saved.local],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await other?.stop();
    }
  }, 60_000);

  it('starts DynamoDB Local with its telemetry to AWS off, and keeps a DDB_LOCAL_TELEMETRY the developer set', async () => {
    const saved = process.env.DDB_LOCAL_TELEMETRY;
    expect(await startedWith(dynamodb.pid, 'DDB_LOCAL_TELEMETRY')).toBe(saved ?? '0');
    expect(process.env.DDB_LOCAL_TELEMETRY).toBe(saved);

    // Another spelling of off: a test turning it on would send traffic off this machine.
    process.env.DDB_LOCAL_TELEMETRY = 'false';
    let other: DynamoDbLocal | undefined;
    try {
      other = await startDynamoDbLocal();
      expect(await startedWith(other.pid, 'DDB_LOCAL_TELEMETRY')).toBe('false');
      expect(process.env.DDB_LOCAL_TELEMETRY).toBe('false');
    } finally {
      if (saved === undefined) delete process.env.DDB_LOCAL_TELEMETRY;
      else process.env.DDB_LOCAL_TELEMETRY = saved;
      await other?.stop();
    }
  }, 60_000);
});
