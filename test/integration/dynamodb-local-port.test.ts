import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { CreateTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  type DynamoDbLocal,
  freePort,
  localClient,
  startDynamoDbLocal,
} from '#infra/local/dynamodb-local.ts';

/*
 * DynamoDB Local on a port found free: Java takes no port 0, so the port is found free first and
 * bound by Java a second or two later, and another process may take it in between. The tests take
 * it first, on purpose: the first port chosen is already taken.
 */

const started: DynamoDbLocal[] = [];
const listeners: Server[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((dynamodb) => dynamodb.stop()));
  for (const listener of listeners.splice(0)) listener.close();
});

/** Chooses `taken` first, then free ports; counts how often it was asked. */
function takenFirst(taken: number) {
  const chosen: number[] = [];
  const choosePort = async () => {
    const port = chosen.length === 0 ? taken : await freePort();
    chosen.push(port);
    return port;
  };
  return { choosePort, chosen };
}

/** The table names of the DynamoDB (Local) at `endpoint`. */
async function tablesAt(endpoint: string): Promise<string[]> {
  const client = localClient(endpoint);
  try {
    return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
  } finally {
    client.destroy();
  }
}

describe('DynamoDB Local on a port found free', () => {
  it('tries another port when Java cannot bind the one chosen, and answers on it', {
    timeout: 90_000,
  }, async () => {
    // A listener that accepts and never answers: Java cannot bind beside it.
    const holder = createServer((socket) => socket.on('error', () => undefined));
    listeners.push(holder);
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const taken = (holder.address() as { port: number }).port;
    const { choosePort, chosen } = takenFirst(taken);

    const dynamodb = await startDynamoDbLocal({ choosePort });
    started.push(dynamodb);

    expect(chosen[0]).toBe(taken);
    expect(chosen.length).toBeGreaterThan(1);
    expect(new URL(dynamodb.endpoint).port).toBe(String(chosen.at(-1)));
    expect(await tablesAt(dynamodb.endpoint)).toEqual([]);
  });

  it('does not take another DynamoDB Local on the port chosen for its own', { timeout: 90_000 }, async () => {
    // The run's shared DynamoDB Local answers the readiness probe on its port as Java's would.
    const other = inject('env').DYNAMODB_ENDPOINT as string;
    const { choosePort, chosen } = takenFirst(Number(new URL(other).port));

    const dynamodb = await startDynamoDbLocal({ choosePort });
    started.push(dynamodb);

    expect(dynamodb.endpoint).not.toBe(other);
    expect(chosen.length).toBeGreaterThan(1);
    // Its own: a table made through the endpoint it answered is in no other DynamoDB Local.
    const name = `own-${randomUUID().slice(0, 8)}`;
    const client = localClient(dynamodb.endpoint);
    try {
      await client.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    } finally {
      client.destroy();
    }
    expect(await tablesAt(dynamodb.endpoint)).toEqual([name]);
    expect(await tablesAt(other)).not.toContain(name);
  });
});
