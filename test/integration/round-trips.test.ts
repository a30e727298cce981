import { randomInt } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
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
import { type OperationId, routeOf } from '#shared/routes.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { fund, open } from '../support/wallet.ts';

/*
 * DynamoDB round trips per request: a spy on the functions' DocumentClient records each command
 * and forwards it to DynamoDB Local through an unmocked client, so the requests really succeed.
 */
const real = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
const spy = mockClient(DynamoDBDocumentClient);
const commands = [
  BatchGetCommand,
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

/** The IAM action that authorises each single-item command, and each kind of transaction item. */
const ACTION_OF: Readonly<Record<string, string>> = {
  GetCommand: 'dynamodb:GetItem',
  PutCommand: 'dynamodb:PutItem',
  UpdateCommand: 'dynamodb:UpdateItem',
  DeleteCommand: 'dynamodb:DeleteItem',
  BatchGetCommand: 'dynamodb:BatchGetItem',
  QueryCommand: 'dynamodb:Query',
  Get: 'dynamodb:GetItem',
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

/** The IAM actions a command needs: transactions are authorised by the actions of their items. */
function actionsOf(command: { constructor: { name: string }; input: unknown }): string[] {
  const name = command.constructor.name;
  if (name === 'TransactWriteCommand' || name === 'TransactGetCommand') {
    const items = (command.input as { TransactItems: Record<string, unknown>[] }).TransactItems;
    return items.flatMap((item) => Object.keys(item).map((kind) => ACTION_OF[kind] ?? `unknown ${kind}`));
  }
  return [ACTION_OF[name] ?? `unknown ${name}`];
}

/**
 * The DynamoDB commands one request sent, by name, after checking them against the route's IAM
 * grant: by default that the grant is exactly the set of actions they needed (neither a denied
 * call on AWS nor an unused permission); with `part`, that it covers them (a path that needs only
 * some of the grant, the rest being proved by another case of the same route).
 */
async function roundTripsOf(
  operationId: OperationId,
  request: () => Promise<{ statusCode: number }>,
  { part = false } = {},
): Promise<string[]> {
  spy.resetHistory();
  const response = await request();
  expect(response.statusCode).toBe(200);
  const sent = spy.calls().map((call) => call.args[0] as unknown as Parameters<typeof actionsOf>[0]);
  const needed = [...new Set(sent.flatMap(actionsOf))].sort();
  const granted = [...(routeOf(operationId).data?.actions ?? [])].sort();
  if (part) expect(granted).toEqual(expect.arrayContaining(needed));
  else expect(needed).toEqual(granted);
  return sent.map((command) => command.constructor.name);
}

describe("DynamoDB round trips per request, each exactly covered by its route's grant", () => {
  it('add pet: one conditional write', async () => {
    const sent = await roundTripsOf('addPet', () =>
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
    const sent = await roundTripsOf('getPetById', () =>
      invoke(getPet, apiEvent({ scopes: ['read:pets'], pathParameters: { petId: String(id) } })),
    );
    expect(sent).toEqual(['GetCommand']);
  });

  it("balance: a read, and on the owner's first call one conditional write that opens the wallet", async () => {
    const sub = uniqueSub();
    const sent = await roundTripsOf('getBalance', () =>
      invoke(getBalance, apiEvent({ sub, scopes: ['read:wallet'] })),
    );
    expect(sent).toEqual(['GetCommand', 'PutCommand']);
  });

  it('balance: one read once the wallet is open', async () => {
    const sub = uniqueSub();
    await fund(sub, 100);
    const sent = await roundTripsOf(
      'getBalance',
      () => invoke(getBalance, apiEvent({ sub, scopes: ['read:wallet'] })),
      { part: true },
    );
    expect(sent).toEqual(['GetCommand']);
  });

  it('send: one consistent read of both wallets, then one transaction (double entry needs the running balances)', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub()];
    await Promise.all([fund(alice, 100), open(bob)]);
    const sent = await roundTripsOf('sendMoney', () =>
      invoke(
        send,
        apiEvent({
          sub: alice,
          method: 'POST',
          scopes: ['write:wallet'],
          body: { toAddress: bob, amount: 0.5 },
        }),
      ),
    );
    expect(sent).toEqual(['BatchGetCommand', 'TransactWriteCommand']);
  });
});
