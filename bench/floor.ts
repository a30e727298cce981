/**
 * The floor of the end-to-end benchmark: each route's DynamoDB calls made directly with the SDK,
 * the least any implementation of the route must do. `bench/floor-server.ts` serves them behind a
 * bare node:http server; the benchmark checks them here, in its own process, before timing.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  BatchGetCommand,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { STATUS_INDEX, statusShardKey, statusShardOf, tagEntry, tagNamesOf } from '#shared/pets/pet-index.ts';
import type { Pet } from '#shared/schemas/pet.ts';
import {
  creditKey,
  directClaimKey,
  entryKey,
  HISTORY_INDEX,
  idempotencyKey,
  inboundKey,
  transferKey,
  walletKey,
} from '#shared/wallet/dynamodb/keys.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { DYNAMODB_CALLS, fullPet, nextBenchPetId, SEARCHED_STATUS } from './workload.ts';

/** Whose items a floor call touches: each benchmark worker has its own wallet and pet. */
export interface FloorCaller {
  readonly sub: string;
  readonly petId: number;
  /** One of its movements (its funding deposit), for get-transfer. */
  readonly transferId: string;
  /** The request's body, when it has one (update-pet's pet). */
  readonly body?: string;
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
  /** One strongly consistent BatchGetItem of the wallets table, by key. */
  const readItems = async (keys: readonly string[]) => {
    const { Responses } = await client.send(
      new BatchGetCommand({
        RequestItems: { [walletsTable]: { Keys: keys.map((pk) => ({ pk })), ConsistentRead: true } },
      }),
    );
    return new Map((Responses?.[walletsTable] ?? []).map((item) => [item.pk as string, item]));
  };
  /** A pet as the pets table stores it: with a new revision and its status shard (the status index). */
  const petItem = (pet: Pet) => ({
    ...pet,
    revision: randomBytes(12).toString('base64url'),
    statusShard: statusShardOf(pet),
  });
  return {
    // The pet and an entry per tag name (the tags index), in one transaction.
    'add-pet': async () => {
      const pet = fullPet(nextBenchPetId());
      await client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: petsTable,
                Item: petItem(pet),
                ConditionExpression: 'attribute_not_exists(id)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            ...tagNamesOf(pet).map((tag) => ({ Put: { TableName: petsTable, Item: tagEntry(pet.id, tag) } })),
          ],
        }),
      );
    },
    // The pet's revision, read strongly consistent, then the body's pet put conditional on it, in
    // a transaction for its token (tags unchanged: no entry changes).
    'update-pet': async (caller) => {
      const pet = caller.body === undefined ? fullPet(caller.petId) : (JSON.parse(caller.body) as Pet);
      const { Item } = await client.send(
        new GetCommand({ TableName: petsTable, Key: { id: pet.id }, ConsistentRead: true }),
      );
      if (Item === undefined) throw new Error(`No pet ${pet.id} to update`);
      await client.send(
        new TransactWriteCommand({
          ClientRequestToken: randomUUID(),
          TransactItems: [
            {
              Put: {
                TableName: petsTable,
                Item: petItem(pet),
                ConditionExpression: 'revision = :revision',
                ExpressionAttributeValues: { ':revision': Item.revision },
              },
            },
          ],
        }),
      );
    },
    // The first page (20) of the status's first shard, ids only, then those pets, consistent.
    'find-pets-by-status': async () => {
      const { Items = [] } = await client.send(
        new QueryCommand({
          TableName: petsTable,
          IndexName: STATUS_INDEX,
          KeyConditionExpression: 'statusShard = :value',
          ExpressionAttributeValues: { ':value': statusShardKey(SEARCHED_STATUS, 0) },
          ProjectionExpression: 'id',
          Limit: 20,
        }),
      );
      if (Items.length < 20) throw new Error(`The status's first shard holds ${Items.length} pets, not 20`);
      await client.send(
        new BatchGetCommand({
          RequestItems: { [petsTable]: { Keys: Items.map(({ id }) => ({ id })), ConsistentRead: true } },
        }),
      );
    },
    'get-pet': async (caller) => {
      await client.send(
        new GetCommand({ TableName: petsTable, Key: { id: caller.petId }, ConsistentRead: true }),
      );
    },
    'get-balance': async (caller) => {
      await readItems([walletKey(caller.sub), inboundKey(caller.sub)]);
    },
    // The read and the transaction of `commitTransfer` with an Idempotency-Key, item for item: the
    // running balances and seqs come from the read, so the floor writes a ledger the audit accepts.
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
      const from = walletAccount(transfer.fromAddress);
      const to = walletAccount(transfer.toAddress);
      const claimKey = idempotencyKey(caller.sub, randomUUID());
      // The claim of the recipient's direct credit goes out beside the read.
      const [read] = await Promise.all([
        readItems([
          walletKey(transfer.fromAddress),
          walletKey(transfer.toAddress),
          inboundKey(transfer.toAddress),
          claimKey,
        ]),
        client.send(
          new UpdateCommand({
            TableName: walletsTable,
            Key: { pk: directClaimKey(transfer.toAddress) },
            UpdateExpression: 'SET kind = :kind, claimId = :id, claimedAt = :now, expiresAt = :expires',
            ExpressionAttributeValues: {
              ':kind': 'direct-claim',
              ':id': transfer.transferId,
              ':now': Date.now(),
              ':expires': nowEpoch + 86_400,
            },
            ReturnValues: 'ALL_OLD',
          }),
        ),
      ]);
      const stateOf = (pk: string) => {
        const item = read.get(pk);
        return { balance: Number(item?.balance ?? 0), seq: Number(item?.seq ?? 0) };
      };
      const sender = stateOf(walletKey(transfer.fromAddress));
      const recipient = stateOf(walletKey(transfer.toAddress));
      const amount = transfer.amountMinor;
      const accountUpdate = (pk: string, before: typeof sender, after: number, claim?: string) => ({
        Update: {
          TableName: walletsTable,
          Key: { pk },
          UpdateExpression: `SET balance = :after, seq = :next, updatedAt = :now, kind = :kind, openedAt = if_not_exists(openedAt, :now)${claim ? ', directClaim = :claim' : ''}`,
          ConditionExpression: 'balance = :before AND (seq = :seq OR attribute_not_exists(seq))',
          ExpressionAttributeValues: {
            ':before': before.balance,
            ':seq': before.seq,
            ':after': after,
            ':next': before.seq + 1,
            ':now': now,
            ':kind': 'wallet',
            ...(claim ? { ':claim': claim } : {}),
          },
        },
      });
      const entry = (
        account: string,
        self: typeof sender,
        other: string,
        otherSeq: number,
        direction: 'in' | 'out',
        after: number,
      ) => ({
        Put: {
          TableName: walletsTable,
          Item: {
            pk: entryKey(account, self.seq + 1),
            kind: 'entry',
            account,
            seq: self.seq + 1,
            transferId: transfer.transferId,
            transferKind: 'transfer',
            direction,
            amountMinor: amount,
            balanceAfter: after,
            counterpartyAccount: other,
            counterpartySeq: otherSeq,
            currency: transfer.currency,
            createdAt: now,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
      await client.send(
        new TransactWriteCommand({
          ClientRequestToken: transfer.transferId,
          TransactItems: [
            accountUpdate(walletKey(transfer.fromAddress), sender, sender.balance - amount),
            accountUpdate(
              walletKey(transfer.toAddress),
              recipient,
              recipient.balance + amount,
              transfer.transferId,
            ),
            {
              Put: {
                TableName: walletsTable,
                Item: {
                  pk: transferKey(transfer.transferId),
                  kind: 'transfer',
                  transferKind: 'transfer',
                  ...transfer,
                  fromSeq: sender.seq + 1,
                  toSeq: recipient.seq + 1,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            entry(from, sender, to, recipient.seq + 1, 'out', sender.balance - amount),
            entry(to, recipient, from, sender.seq + 1, 'in', recipient.balance + amount),
            {
              Put: {
                TableName: walletsTable,
                Item: { pk: claimKey, kind: 'idempotency', transfer, expiresAt: nowEpoch + 86_400 },
                ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowEpoch',
                ExpressionAttributeValues: { ':nowEpoch': nowEpoch },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      );
    },
    // `history.entries`: the first page (20) of the caller's history index, newest first.
    'list-transfers': async (caller) => {
      await Promise.all([
        client.send(
          new QueryCommand({
            TableName: walletsTable,
            IndexName: HISTORY_INDEX,
            KeyConditionExpression: 'account = :a',
            ExpressionAttributeValues: { ':a': walletAccount(caller.sub) },
            ScanIndexForward: false,
            Limit: 20,
          }),
        ),
        readItems([inboundKey(caller.sub)]),
      ]);
    },
    // `history.movement`: one movement by id and its credit's state, strongly consistent.
    'get-transfer': async (caller) => {
      await readItems([transferKey(caller.transferId), creditKey(caller.transferId)]);
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
      // Calls made at once may leave in either order.
      if ([...sent].sort().join() !== [...expected].sort().join()) {
        throw new Error(`The floor of ${dir} sent ${sent.join() || 'nothing'}, not ${expected.join()}`);
      }
    }
  } finally {
    client.middlewareStack.remove(name);
  }
}
