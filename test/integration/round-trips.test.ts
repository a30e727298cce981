import { randomInt } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as addPet } from '#functions/add-pet/handler.ts';
import { handler as getBalance } from '#functions/get-balance/handler.ts';
import { handler as getPet } from '#functions/get-pet/handler.ts';
import { handler as send } from '#functions/send-money/handler.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { fund } from '../support/wallet.ts';

/*
 * DynamoDB round trips per request: a spy on the functions' DocumentClient records each command
 * and forwards it to DynamoDB Local through an unmocked client, so the requests really succeed.
 */
const real = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
const spy = mockClient(DynamoDBDocumentClient);
const commands = [
  GetCommand,
  PutCommand,
  UpdateCommand,
  DeleteCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
];

beforeEach(() => {
  spy.reset();
  for (const Command of commands) {
    spy.on(Command as never).callsFake((input) => real.send(new Command(input as never) as never));
  }
});
afterAll(() => spy.restore());

/** The DynamoDB commands one request sent, by name. */
async function roundTripsOf(request: () => Promise<{ statusCode: number }>): Promise<string[]> {
  spy.resetHistory();
  const response = await request();
  expect(response.statusCode).toBe(200);
  return spy.calls().map((call) => (call.args[0] as object).constructor.name);
}

describe('DynamoDB round trips per request', () => {
  it('add pet: one conditional write', async () => {
    const sent = await roundTripsOf(() =>
      invoke(
        addPet,
        apiEvent({ method: 'POST', scopes: ['write:pets'], body: { name: 'rex', photoUrls: [] } }),
      ),
    );
    expect(sent).toEqual(['PutCommand']);
  });

  it('get pet: one read', async () => {
    const id = 2 ** 52 + randomInt(2 ** 47);
    await invoke(
      addPet,
      apiEvent({ method: 'POST', scopes: ['write:pets'], body: { id, name: 'rex', photoUrls: [] } }),
    );
    const sent = await roundTripsOf(() =>
      invoke(getPet, apiEvent({ scopes: ['read:pets'], pathParameters: { petId: String(id) } })),
    );
    expect(sent).toEqual(['GetCommand']);
  });

  it('balance: one read', async () => {
    const sent = await roundTripsOf(() => invoke(getBalance, apiEvent({ scopes: ['read:wallet'] })));
    expect(sent).toEqual(['GetCommand']);
  });

  it('send: one transaction, then the one read of the balance the response reports', async () => {
    const alice = uniqueSub('alice');
    await fund(alice, 100);
    const sent = await roundTripsOf(() =>
      invoke(
        send,
        apiEvent({
          sub: alice,
          method: 'POST',
          scopes: ['write:wallet'],
          body: { toAddress: uniqueSub(), amount: 0.5 },
        }),
      ),
    );
    expect(sent).toEqual(['TransactWriteCommand', 'GetCommand']);
  });
});
