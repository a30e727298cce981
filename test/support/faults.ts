import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, type GetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach } from 'vitest';
import { DynamoDbFaultProxy, type ProxiedRequest } from './dynamodb-fault-proxy.ts';

/*
 * Fault tests route the functions through a DynamoDbFaultProxy. The repositories create their
 * DocumentClient when their module loads, so a fault test file calls routeThroughFaultProxy()
 * first and only then imports the handlers (dynamic import); vitest gives each file its own
 * module graph, so no other file sees the proxy.
 */

const upstream = process.env.DYNAMODB_ENDPOINT;

/** DynamoDB Local itself, past the proxy: what is really stored. */
const dynamoDbLocal = new DynamoDBClient({ endpoint: upstream });

/** Reads an item straight from DynamoDB Local (strongly consistent), never through the proxy. */
export async function storedItem(
  tableName: string | undefined,
  key: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const { Item } = (await dynamoDbLocal.send(
    new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }) as never,
  )) as GetCommandOutput;
  return Item;
}

/**
 * Starts a proxy in front of DynamoDB Local and points DYNAMODB_ENDPOINT of this test file at it.
 * Faults are cleared after each test; the proxy closes after the file.
 */
export async function routeThroughFaultProxy(): Promise<DynamoDbFaultProxy> {
  if (!upstream) throw new Error('DYNAMODB_ENDPOINT is not set: run through vitest');
  const proxy = await DynamoDbFaultProxy.start(upstream);
  process.env.DYNAMODB_ENDPOINT = proxy.endpoint;
  afterEach(() => proxy.heal());
  afterAll(async () => {
    await proxy.close();
    dynamoDbLocal.destroy();
  });
  return proxy;
}

/** Selects the requests whose body mentions `text` (a test's unique address or id). */
export const mentions =
  (text: string) =>
  (request: ProxiedRequest): boolean =>
    request.body.includes(text);
