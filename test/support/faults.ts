import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, type GetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach } from 'vitest';
import type { ProxiedRequest } from '#infra/local/dynamodb-faults.ts';
import { DynamoDbProxy, type DynamoDbProxyOptions } from '#infra/local/dynamodb-proxy.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';

/*
 * Fault tests route the functions through a DynamoDbProxy: a test file starts one with
 * startFaultProxy() and builds each function through its composition root with a client pointed
 * at it, `createAddPetHandler({ client: proxiedClient(proxy) })`. Nothing changes the environment, so
 * neither import order nor other test files matter.
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
 * Starts a proxy in front of DynamoDB Local for this test file; `{ conflicts: true }` makes it
 * raise DynamoDB's transaction conflicts as well. Faults are cleared after each test; the proxy
 * closes after the file.
 */
export async function startFaultProxy(options: DynamoDbProxyOptions = {}): Promise<DynamoDbProxy> {
  if (!upstream) throw new Error('DYNAMODB_ENDPOINT is not set: run through vitest');
  const proxy = await DynamoDbProxy.start(upstream, options);
  afterEach(() => proxy.heal());
  afterAll(async () => {
    await proxy.close();
    dynamoDbLocal.destroy();
  });
  return proxy;
}

/** The DocumentClient a function gets in production, sending its requests through `proxy`. */
export const proxiedClient = (
  proxy: DynamoDbProxy,
  options: { readonly requestTimeoutMs?: number } = {},
): DynamoDBDocumentClient => createDocumentClient({ endpoint: proxy.endpoint, ...options });

/**
 * Selects the requests the code made, not the ones the SDK sent again after its request timeout
 * (a loaded DynamoDB Local): for exact counts, which failed whenever it was that slow (helper-38).
 */
export const notGivenUp = (request: ProxiedRequest): boolean => !request.abandoned;

/** Selects the requests whose body mentions `text` (a test's unique address or id). */
export const mentions =
  (text: string) =>
  (request: ProxiedRequest): boolean =>
    request.body.includes(text);
