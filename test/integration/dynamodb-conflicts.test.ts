import { randomUUID } from 'node:crypto';
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactGetItemsCommand,
  TransactionCanceledException,
  TransactionConflictException,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DynamoDbProxy, TOUCHES_PATH } from '#infra/local/dynamodb-proxy.ts';
import { callerEndpoint } from '#infra/local/dynamodb-share.ts';
import { isRetryable } from '#shared/dynamodb/retry.ts';
import { mentions } from '../support/faults.ts';

/*
 * The proxy's conflict mode, through the real SDK: DynamoDB cancels a transaction naming an item
 * that another request has in flight, and DynamoDB Local never does. To keep a request in flight
 * for as long as a test needs, the conflict proxy forwards to a second proxy that holds chosen
 * requests before DynamoDB Local sees them:
 *
 *   SDK → conflict proxy (under test) → holding proxy → DynamoDB Local
 */

const local = process.env.DYNAMODB_ENDPOINT as string;
const holding = await DynamoDbProxy.start(local);
const proxy = await DynamoDbProxy.start(holding.endpoint, { conflicts: true });
/** One attempt per call: the SDK's own retries would hide the answer under test. */
const client = new DynamoDBClient({ endpoint: proxy.endpoint, maxAttempts: 1 });
const direct = new DynamoDBClient({ endpoint: local });
afterEach(() => {
  holding.heal();
  proxy.heal();
});
afterAll(async () => {
  client.destroy();
  direct.destroy();
  await proxy.close();
  await holding.close();
});

// A key of two attributes, so that a Put's key is picked out of its item by the table's schema.
const table = `conflicts-${randomUUID()}`;
await direct.send(
  new CreateTableCommand({
    TableName: table,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
  }),
);

/** A fresh item key of this test (plain values), and the same in DynamoDB's JSON. */
const newKey = () => {
  const plain = { pk: `item-${randomUUID()}`, sk: 'v' };
  return { plain, wire: { pk: { S: plain.pk }, sk: { S: plain.sk } } };
};
type Key = ReturnType<typeof newKey>;

const put = (key: Key, extra: Record<string, { S: string }> = {}): TransactWriteItem => ({
  // Attributes in another order than the key's, and more of them: the same item all the same.
  Put: { TableName: table, Item: { note: { S: 'x' }, sk: key.wire.sk, ...extra, pk: key.wire.pk } },
});
const update = (key: Key): TransactWriteItem => ({
  Update: {
    TableName: table,
    Key: { sk: key.wire.sk, pk: key.wire.pk },
    UpdateExpression: 'SET n = if_not_exists(n, :zero) + :one',
    ExpressionAttributeValues: { ':zero': { N: '0' }, ':one': { N: '1' } },
  },
});
const conditionCheck = (key: Key): TransactWriteItem => ({
  ConditionCheck: { TableName: table, Key: key.wire, ConditionExpression: 'attribute_not_exists(gone)' },
});
const transact = (items: TransactWriteItem[], token?: string) =>
  client.send(
    new TransactWriteItemsCommand({ TransactItems: items, ...(token ? { ClientRequestToken: token } : {}) }),
  );

/**
 * Sends `start()` and keeps it in flight (held before DynamoDB Local) until `release()`; the
 * request is recognised at the holding proxy by `marker`, a text only its body contains.
 */
async function inFlight<T>(marker: string, start: () => Promise<T>) {
  let release = () => {};
  const until = new Promise<void>((resolve) => {
    release = resolve;
  });
  holding.inject({ kind: 'hold', until }, { when: mentions(marker), times: 1 });
  let settled: unknown;
  const result = start();
  result.then(
    () => {
      settled = 'answered';
    },
    (error: unknown) => {
      settled = error;
    },
  );
  // In flight once the conflict proxy forwarded it: then the holding proxy has it.
  while (holding.requests(undefined, mentions(marker)).length === 0) {
    if (settled !== undefined) throw new Error(`answered before it was held: ${String(settled)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return {
    result,
    release: () => {
      release();
      return result;
    },
  };
}

const stored = async (key: Key) =>
  (await direct.send(new GetItemCommand({ TableName: table, Key: key.wire, ConsistentRead: true }))).Item;

const caught = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (error: unknown) => error,
  );

describe('conflict mode: transactions', () => {
  it('cancels a transaction naming an item another transaction has in flight, as DynamoDB does, without sending it on', async () => {
    const [shared, mine, theirs] = [newKey(), newKey(), newKey()];
    const first = await inFlight(theirs.plain.pk, () => transact([update(shared), put(theirs)]));
    const error = await caught(transact([put(mine), update(shared)]));

    expect(error).toBeInstanceOf(TransactionCanceledException);
    const cancelled = error as TransactionCanceledException;
    expect(cancelled.name).toBe('TransactionCanceledException');
    expect(cancelled.$metadata.httpStatusCode).toBe(400);
    expect(cancelled.message).toBe(
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
    );
    expect(cancelled.CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
    ]);
    // What the wallet code relies on: a conflict is worth another try.
    expect(isRetryable(cancelled)).toBe(true);
    // Answered by the proxy: DynamoDB Local never saw it, nor wrote anything of it.
    expect(holding.requests('TransactWriteItems', mentions(mine.plain.pk))).toHaveLength(0);
    expect(await stored(mine)).toBeUndefined();

    await first.release();
    expect((await stored(shared))?.n).toEqual({ N: '1' });
    // Once the first is done, the same transaction goes through.
    await transact([put(mine), update(shared)]);
    expect((await stored(shared))?.n).toEqual({ N: '2' });
    expect(proxy.itemsInFlight()).toBe(0);
  });

  it('counts a ConditionCheck as naming its item, in either transaction', async () => {
    const [checked, other] = [newKey(), newKey()];
    const first = await inFlight(other.plain.pk, () => transact([conditionCheck(checked), put(other)]));
    const error = (await caught(transact([update(checked)]))) as TransactionCanceledException;
    expect(error.CancellationReasons?.map((r) => r.Code)).toEqual(['TransactionConflict']);
    const checking = (await caught(transact([conditionCheck(other)]))) as TransactionCanceledException;
    expect(checking.CancellationReasons?.map((r) => r.Code)).toEqual(['TransactionConflict']);
    await first.release();
    await transact([update(checked)]);
  });

  it('cancels a transaction naming an item a plain write has in flight', async () => {
    const key = newKey();
    const marker = randomUUID();
    const write = await inFlight(marker, () =>
      client.send(new PutItemCommand({ TableName: table, Item: { ...key.wire, marker: { S: marker } } })),
    );
    const error = (await caught(transact([update(key)]))) as TransactionCanceledException;
    expect(error.name).toBe('TransactionCanceledException');
    expect(error.CancellationReasons?.map((r) => r.Code)).toEqual(['TransactionConflict']);
    await write.release();
  });

  it('answers TransactionInProgressException to the same ClientRequestToken while its transaction is in flight', async () => {
    const key = newKey();
    const token = randomUUID();
    const first = await inFlight(key.plain.pk, () => transact([put(key)], token));
    const error = (await caught(transact([put(key)], token))) as Error;
    expect(error.name).toBe('TransactionInProgressException');
    expect(isRetryable(error)).toBe(true);
    await first.release();
    // The answer names the transaction in flight, which holds the item once and is counted once.
    expect(proxy.touches(table, key.plain)).toEqual({ writes: 1, failed: 0 });
  });

  it('counts a transaction sent again with its token after it was applied once: DynamoDB applies nothing the second time', async () => {
    const key = newKey();
    const token = randomUUID();
    await transact([put(key)], token);
    await transact([put(key)], token);
    expect(proxy.touches(table, key.plain)).toEqual({ writes: 1, failed: 0 });
  });

  it('lets transactions on different items run together', async () => {
    const [a, b] = [newKey(), newKey()];
    const first = await inFlight(a.plain.pk, () => transact([put(a)]));
    await transact([put(b), conditionCheck(newKey())]);
    await first.release();
    expect(await stored(a)).toBeDefined();
  });
});

describe('conflict mode: plain writes and reads', () => {
  it('fails a PutItem, UpdateItem on an item in a transaction in flight with TransactionConflictException, writing nothing', async () => {
    const [key, other] = [newKey(), newKey()];
    const first = await inFlight(other.plain.pk, () => transact([put(key), put(other)]));
    const putError = await caught(
      client.send(new PutItemCommand({ TableName: table, Item: { ...key.wire, by: { S: 'plain' } } })),
    );
    expect(putError).toBeInstanceOf(TransactionConflictException);
    expect((putError as Error).name).toBe('TransactionConflictException');
    expect((putError as Error).message).toBe('Transaction is ongoing for the item');
    expect((putError as TransactionConflictException).$metadata.httpStatusCode).toBe(400);
    expect(isRetryable(putError)).toBe(true);
    const updateError = await caught(
      client.send(
        new UpdateItemCommand({
          TableName: table,
          Key: key.wire,
          UpdateExpression: 'SET n = :one',
          ExpressionAttributeValues: { ':one': { N: '1' } },
        }),
      ),
    );
    expect((updateError as Error).name).toBe('TransactionConflictException');
    expect(holding.requests('PutItem', mentions(key.plain.pk))).toHaveLength(0);

    await first.release();
    expect((await stored(key))?.by).toBeUndefined();
    // Afterwards the plain write goes through.
    await client.send(new PutItemCommand({ TableName: table, Item: { ...key.wire, by: { S: 'plain' } } }));
    expect((await stored(key))?.by).toEqual({ S: 'plain' });
  });

  it('lets plain writes on one item run together: they do not conflict with each other', async () => {
    const key = newKey();
    const [m1, m2] = [randomUUID(), randomUUID()];
    const w1 = await inFlight(m1, () =>
      client.send(new PutItemCommand({ TableName: table, Item: { ...key.wire, m: { S: m1 } } })),
    );
    const w2 = await inFlight(m2, () =>
      client.send(new PutItemCommand({ TableName: table, Item: { ...key.wire, m: { S: m2 } } })),
    );
    await Promise.all([w1.release(), w2.release()]);
  });

  it('passes a failed condition on as DynamoDB Local answers it', async () => {
    const key = newKey();
    await client.send(new PutItemCommand({ TableName: table, Item: key.wire }));
    const error = await caught(
      client.send(
        new PutItemCommand({
          TableName: table,
          Item: key.wire,
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
  });

  it('never makes GetItem, BatchGetItem, Query or Scan conflict, even consistent ones', async () => {
    const key = newKey();
    await direct.send(new PutItemCommand({ TableName: table, Item: { ...key.wire, v: { S: 'before' } } }));
    const first = await inFlight(key.plain.pk, () => transact([put(key, { v: { S: 'after' } })]));
    const item = await client.send(
      new GetItemCommand({ TableName: table, Key: key.wire, ConsistentRead: true }),
    );
    expect(item.Item?.v).toEqual({ S: 'before' });
    const batch = await client.send(
      new BatchGetItemCommand({ RequestItems: { [table]: { Keys: [key.wire], ConsistentRead: true } } }),
    );
    expect(batch.Responses?.[table]).toHaveLength(1);
    const query = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': key.wire.pk },
        ConsistentRead: true,
      }),
    );
    expect(query.Count).toBe(1);
    await client.send(new ScanCommand({ TableName: table, ConsistentRead: true, Limit: 5 }));
    await first.release();
  });

  it('cancels a TransactGetItems naming an item a write has in flight, as DynamoDB does', async () => {
    const [key, other] = [newKey(), newKey()];
    const first = await inFlight(key.plain.pk, () => transact([put(key)]));
    const error = (await caught(
      client.send(
        new TransactGetItemsCommand({
          TransactItems: [
            { Get: { TableName: table, Key: other.wire } },
            { Get: { TableName: table, Key: key.wire } },
          ],
        }),
      ),
    )) as TransactionCanceledException;
    expect(error.name).toBe('TransactionCanceledException');
    expect(error.CancellationReasons?.map((r) => r.Code)).toEqual(['None', 'TransactionConflict']);
    await first.release();
  });
});

describe('conflict mode: touches', () => {
  it('counts per item the write attempts naming it: written, or named in an attempt that failed', async () => {
    const [hot, a, b] = [newKey(), newKey(), newKey()];
    // Written: a plain put, then a transaction's ConditionCheck.
    await client.send(new PutItemCommand({ TableName: table, Item: hot.wire }));
    await transact([conditionCheck(hot), put(a)]);
    // Named in a transaction the proxy cancels, and in a plain write it refuses.
    const first = await inFlight(b.plain.pk, () => transact([update(hot), put(b)]));
    await caught(transact([update(hot)]));
    await caught(client.send(new PutItemCommand({ TableName: table, Item: hot.wire })));
    await first.release();
    // Named in a transaction DynamoDB cancels: a condition fails.
    await caught(
      transact([
        {
          ConditionCheck: {
            TableName: table,
            Key: hot.wire,
            ConditionExpression: 'attribute_exists(nothing)',
          },
        },
      ]),
    );
    // Reads touch nothing.
    await client.send(new GetItemCommand({ TableName: table, Key: hot.wire }));

    expect(proxy.touches(table, hot.plain)).toEqual({ writes: 3, failed: 3 });
    expect(proxy.touches(table, a.plain)).toEqual({ writes: 1, failed: 0 });
    expect(proxy.touches(table, newKey().plain)).toEqual({ writes: 0, failed: 0 });
    const report = proxy.touchReport().filter((entry) => entry.table === table);
    expect(report[0]).toEqual({ table, key: hot.plain, writes: 3, failed: 3 });
  });

  it('counts an attempt a fault answers in DynamoDB’s place as failed: conflicts and faults compose', async () => {
    const key = newKey();
    proxy.inject({ kind: 'throttle' }, { when: mentions(key.plain.pk), times: 1 });
    const throttled = await caught(transact([put(key)]));
    expect((throttled as Error).name).toBe('ThrottlingException');
    proxy.inject({ kind: 'transaction-conflict' }, { when: mentions(key.plain.pk), times: 1 });
    const conflicted = await caught(transact([put(key)]));
    expect((conflicted as TransactionCanceledException).CancellationReasons?.[0]?.Code).toBe(
      'TransactionConflict',
    );
    await transact([put(key)]);
    expect(proxy.touches(table, key.plain)).toEqual({ writes: 1, failed: 2 });
    expect(proxy.itemsInFlight()).toBe(0);
  });

  it('serves the touch report over HTTP for another process, and forgets it on DELETE', async () => {
    const key = newKey();
    await transact([put(key)]);
    const report = (await (await fetch(`${proxy.endpoint}${TOUCHES_PATH}`)).json()) as unknown[];
    expect(report).toContainEqual({ table, key: key.plain, writes: 1, failed: 0 });
    expect((await fetch(`${proxy.endpoint}${TOUCHES_PATH}`, { method: 'DELETE' })).status).toBe(204);
    expect(proxy.touches(table, key.plain)).toEqual({ writes: 0, failed: 0 });
  });
});

describe('the touch report of a table keyed by number', () => {
  it('names a key past 2^53 exactly, where a JavaScript number cannot hold it (a pet id of int64)', async () => {
    const numbered = `conflicts-numbered-${randomUUID()}`;
    await direct.send(
      new CreateTableCommand({
        TableName: numbered,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
      }),
    );
    const [big, small] = ['9223372036854775807', '42'];
    for (const id of [big, small]) {
      await client.send(new PutItemCommand({ TableName: numbered, Item: { id: { N: id } } }));
    }
    // Over HTTP, as the e2e tests read it: a key it could not write out cost the report itself.
    const answer = await fetch(`${proxy.endpoint}${TOUCHES_PATH}`);
    expect(answer.status).toBe(200);
    const report = ((await answer.json()) as { table: string }[]).filter((entry) => entry.table === numbered);
    expect(report).toEqual(
      expect.arrayContaining([
        { table: numbered, key: { id: big }, writes: 1, failed: 0 },
        { table: numbered, key: { id: 42 }, writes: 1, failed: 0 },
      ]),
    );
    expect(report).toHaveLength(2);
  });
});

describe('without conflict mode', () => {
  it('passes concurrent transactions on one item through, as DynamoDB Local does', async () => {
    const plain = await DynamoDbProxy.start(holding.endpoint);
    const through = new DynamoDBClient({ endpoint: plain.endpoint, maxAttempts: 1 });
    try {
      const [shared, other] = [newKey(), newKey()];
      const first = await inFlight(other.plain.pk, () =>
        through.send(new TransactWriteItemsCommand({ TransactItems: [update(shared), put(other)] })),
      );
      await through.send(new TransactWriteItemsCommand({ TransactItems: [update(shared)] }));
      await first.release();
      expect((await stored(shared))?.n).toEqual({ N: '2' });
      expect(() => plain.touchReport()).toThrow(/conflict mode/);
    } finally {
      through.destroy();
      await plain.close();
    }
  });
});

describe('sharing DynamoDB Local among callers', () => {
  it('serves the requests waiting for a slot one caller after another, the caller named by its endpoint', async () => {
    const shared = await DynamoDbProxy.start(holding.endpoint, { callerSlots: 1 });
    const callerClient = (caller: string) =>
      new DynamoDBClient({ endpoint: callerEndpoint(shared.endpoint, caller), maxAttempts: 1 });
    const [busy, quiet] = [callerClient('busy'), callerClient('quiet')];
    const answered: string[] = [];
    const get = (through: DynamoDBClient, name: string, key = newKey()) =>
      through.send(new GetItemCommand({ TableName: table, Key: key.wire })).then(() => answered.push(name));
    try {
      // The busy caller's first request holds the one slot; four more of its own, then the quiet
      // caller's one, wait for it.
      const held = newKey();
      const first = await inFlight(held.plain.pk, () => get(busy, 'busy-1', held));
      const waiting = [2, 3, 4, 5].map((n) => get(busy, `busy-${n}`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const theQuietOne = get(quiet, 'quiet');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await first.release();
      await Promise.all([...waiting, theQuietOne]);
      expect(answered).toEqual(['busy-1', 'busy-2', 'quiet', 'busy-3', 'busy-4', 'busy-5']);
    } finally {
      busy.destroy();
      quiet.destroy();
      await shared.close();
    }
  });

  it("serves a caller's read waiting before its own writes that came first, as the operation names it", async () => {
    const shared = await DynamoDbProxy.start(holding.endpoint, { callerSlots: 1 });
    const dispatcher = new DynamoDBClient({
      endpoint: callerEndpoint(shared.endpoint, 'dispatcher'),
      maxAttempts: 1,
    });
    const answered: string[] = [];
    try {
      // Its first request holds the one slot; two puts of its own, then a read, wait for it, each
      // sent once the one before it waits at the share (not after a pause, which a loaded machine
      // can outlast: then the order under test would be the order of arrival).
      const arrived = async (count: number) => {
        while (shared.requests().length < count) await new Promise((resolve) => setTimeout(resolve, 5));
      };
      const held = newKey();
      const first = await inFlight(held.plain.pk, () =>
        dispatcher.send(new GetItemCommand({ TableName: table, Key: held.wire })),
      );
      const writes: Promise<number>[] = [];
      for (const n of [1, 2]) {
        writes.push(
          dispatcher
            .send(new PutItemCommand({ TableName: table, Item: newKey().wire }))
            .then(() => answered.push(`put-${n}`)),
        );
        await arrived(1 + n);
      }
      const read = dispatcher
        .send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': held.wire.pk },
          }),
        )
        .then(() => answered.push('query'));
      await arrived(4);
      await first.release();
      await Promise.all([...writes, read]);
      expect(answered).toEqual(['query', 'put-1', 'put-2']);
    } finally {
      dispatcher.destroy();
      await shared.close();
    }
  });
});
