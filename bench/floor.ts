/**
 * The floor of the end-to-end benchmark: each route's DynamoDB calls made directly with the SDK,
 * the least any implementation of the route must do. `bench/floor-server.ts` serves them behind a
 * bare node:http server; the benchmark checks them here, in its own process, before timing.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_CALLS, fullPet, nextBenchPetId } from './workload.ts';

/** Whose items a floor call touches: each benchmark worker has its own wallet and pet. */
export interface FloorCaller {
  readonly sub: string;
  readonly petId: number;
}

/** Names the caller whose items a request to the floor server touches (the gateway reads it from the token). */
export const CALLER_HEADER = 'x-bench-sub';

/** The floor call of each route, by function folder; none for a route without DynamoDB work. */
export type FloorOperations = Record<string, ((caller: FloorCaller) => Promise<void>) | undefined>;

/** The DynamoDB calls of each route, made directly with the SDK (see `round-trips.test.ts`). */
export function floorOperations(
  client: DynamoDBDocumentClient,
  petsTable: string,
  walletsTable: string,
): FloorOperations {
  return {
    'add-pet': async () => {
      await client.send(
        new PutCommand({
          TableName: petsTable,
          Item: fullPet(nextBenchPetId()),
          ConditionExpression: 'attribute_not_exists(id)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    },
    'get-pet': async (caller) => {
      await client.send(
        new GetCommand({ TableName: petsTable, Key: { id: caller.petId }, ConsistentRead: true }),
      );
    },
    'get-balance': async (caller) => {
      await client.send(
        new GetCommand({
          TableName: walletsTable,
          Key: { pk: `WALLET#${caller.sub}` },
          ConsistentRead: true,
        }),
      );
    },
    // The transaction of `commitTransfer` with an Idempotency-Key, item for item.
    'send-money': async (caller) => {
      const transfer = {
        transferId: randomUUID(),
        fromAddress: caller.sub,
        toAddress: `recipient-of-${caller.sub}`,
        amountMinor: 1234,
        currency: 'USD',
        createdAt: new Date().toISOString(),
      };
      const now = transfer.createdAt;
      const nowEpoch = Math.floor(Date.now() / 1000);
      await client.send(
        new TransactWriteCommand({
          ClientRequestToken: transfer.transferId,
          TransactItems: [
            {
              Update: {
                TableName: walletsTable,
                Key: { pk: `WALLET#${transfer.fromAddress}` },
                UpdateExpression: 'SET balance = balance - :amount, updatedAt = :now',
                ConditionExpression: 'balance >= :amount',
                ExpressionAttributeValues: { ':amount': transfer.amountMinor, ':now': now },
              },
            },
            {
              Update: {
                TableName: walletsTable,
                Key: { pk: `WALLET#${transfer.toAddress}` },
                UpdateExpression: 'ADD balance :amount SET updatedAt = :now',
                ExpressionAttributeValues: { ':amount': transfer.amountMinor, ':now': now },
              },
            },
            {
              Put: {
                TableName: walletsTable,
                Item: { pk: `TRANSFER#${transfer.transferId}`, kind: 'transfer', ...transfer },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: walletsTable,
                Item: {
                  pk: `IDEMPOTENCY#${JSON.stringify([caller.sub, randomUUID()])}`,
                  kind: 'idempotency',
                  transfer,
                  expiresAt: nowEpoch + 86_400,
                },
                ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowEpoch',
                ExpressionAttributeValues: { ':nowEpoch': nowEpoch },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      );
    },
  };
}

/**
 * A floor is only a floor if it makes exactly its route's DynamoDB calls: runs each once and
 * compares the operations sent (X-Amz-Target, in order) with the route's, before anything is timed.
 */
export async function checkFloors(
  client: DynamoDBDocumentClient,
  direct: FloorOperations,
  functionDirs: readonly string[],
  caller: FloorCaller,
): Promise<void> {
  const sent: string[] = [];
  const name = 'benchOperationLog';
  client.middlewareStack.add(
    (next) => (args) => {
      const headers = (args.request as { headers?: Record<string, string> }).headers;
      sent.push(headers?.['x-amz-target']?.split('.')[1] ?? 'unknown');
      return next(args);
    },
    { step: 'finalizeRequest', name },
  );
  try {
    for (const dir of functionDirs) {
      const floor = direct[dir];
      if (!floor) continue;
      sent.length = 0;
      await floor(caller);
      const expected = DYNAMODB_CALLS[dir] ?? [];
      if (sent.join() !== expected.join()) {
        throw new Error(`The floor of ${dir} sent ${sent.join() || 'nothing'}, not ${expected.join()}`);
      }
    }
  } finally {
    client.middlewareStack.remove(name);
  }
}
