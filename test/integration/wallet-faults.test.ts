import { randomUUID } from 'node:crypto';
import {
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { GetCommand, type GetCommandOutput, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as send } from '#functions/send-money/handler.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { forward, mockDocumentClients, throttled, timeout } from '../support/faults.ts';
import { fund, open } from '../support/wallet.ts';

const ddb = mockDocumentClients();

const conflict = () =>
  new TransactionCanceledException({
    message:
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
    $metadata: {},
    CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }, { Code: 'None' }],
  });

const sendAs = (sub: string, body: unknown, headers: Record<string, string> = {}) =>
  invoke(
    send,
    apiEvent({ sub, scopes: ['write:wallet'], method: 'POST', path: '/api/wallet/send', body, headers }),
  );

async function balanceMinor(address: string): Promise<number> {
  const { Item } = (await forward(
    new GetCommand({
      TableName: process.env.WALLETS_TABLE_NAME,
      Key: { pk: `WALLET#${address}` },
      ConsistentRead: true,
    }),
  )) as GetCommandOutput;
  return (Item?.balance as number | undefined) ?? 0;
}

describe('send money under faults', () => {
  it('retries a transaction conflict and commits once', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    ddb.resetHistory();
    let conflicts = 2;
    ddb
      .on(TransactWriteCommand)
      .callsFake((input) =>
        conflicts-- > 0 ? Promise.reject(conflict()) : forward(new TransactWriteCommand(input)),
      );
    const response = await sendAs(alice, { toAddress: bob, amount: 1 });
    expect(response.statusCode).toBe(200);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
    // Every retry resent the very same transaction, token included.
    const tokens = ddb
      .commandCalls(TransactWriteCommand)
      .map((call) => call.args[0].input.ClientRequestToken);
    expect(new Set(tokens).size).toBe(1);
    expect(await balanceMinor(alice)).toBe(900);
    expect(await balanceMinor(bob)).toBe(100);
  });

  it.each([
    ['throttling', throttled],
    [
      'provisioned throughput exceeded',
      () => new ProvisionedThroughputExceededException({ message: 'exceeded', $metadata: {} }),
    ],
    ['conflicts', conflict],
    ['timeouts', timeout],
  ])(
    'answers 503 with Retry-After after bounded retries of %s, with no partial state and no SDK message',
    async (_name, fault) => {
      const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
      await fund(alice, 1_000);
      await open(bob);
      ddb.resetHistory();
      ddb.on(TransactWriteCommand).callsFake(() => Promise.reject(fault()));
      const response = await sendAs(alice, { toAddress: bob, amount: 1 });
      expect(response.statusCode).toBe(503);
      expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
      expect(response.contentType).toBe('application/problem+json');
      expect(response.body).not.toMatch(/exceeds|exceeded|timed out|cancel|Exception|at /i);
      expect(ddb.commandCalls(TransactWriteCommand).length).toBeGreaterThan(1);
      expect(ddb.commandCalls(TransactWriteCommand).length).toBeLessThanOrEqual(5);
      expect(await balanceMinor(alice)).toBe(1_000);
      expect(await balanceMinor(bob)).toBe(0);
    },
  );

  it('does not debit twice when a commit succeeded but its response was lost, within one request', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    ddb.resetHistory();
    let lostAnswers = 1;
    ddb.on(TransactWriteCommand).callsFake(async (input) => {
      const output = await forward(new TransactWriteCommand(input));
      if (lostAnswers-- > 0) throw timeout();
      return output;
    });
    const response = await sendAs(alice, { toAddress: bob, amount: 1 });
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({ fromAddress: alice, toAddress: bob, amount: 1 });
    expect(await balanceMinor(alice)).toBe(900);
    expect(await balanceMinor(bob)).toBe(100);
  });

  it('replays from the key record once DynamoDB has forgotten the request token (after 10 minutes)', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    const headers = { 'Idempotency-Key': `late-${alice}` };
    const first = await sendAs(alice, { toAddress: bob, amount: 3 }, headers);
    expect(first.statusCode).toBe(200);
    // DynamoDB honours a ClientRequestToken for 10 minutes only: a later retry is a new transaction.
    ddb
      .on(TransactWriteCommand)
      .callsFake((input) =>
        forward(new TransactWriteCommand({ ...input, ClientRequestToken: randomUUID() })),
      );
    const late = await sendAs(alice, { toAddress: bob, amount: 3 }, headers);
    expect(late.statusCode).toBe(200);
    expect(late.headers?.['idempotent-replayed']).toBe('true');
    expect(late.json.transferId).toBe(first.json.transferId);
    const other = await sendAs(alice, { toAddress: bob, amount: 4 }, headers);
    expect(other.statusCode).toBe(422);
    expect(await balanceMinor(alice)).toBe(700);
  });

  it('returns the original transfer when the client retries with its key after losing the response', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await fund(alice, 1_000);
    await open(bob);
    ddb.resetHistory();
    const headers = { 'Idempotency-Key': `lost-${alice}` };
    // The commit lands, but every answer is lost: the client sees a 503 and retries later.
    ddb.on(TransactWriteCommand).callsFake(async (input) => {
      await forward(new TransactWriteCommand(input)).catch(() => undefined);
      throw timeout();
    });
    const lost = await sendAs(alice, { toAddress: bob, amount: 2 }, headers);
    expect(lost.statusCode).toBe(503);
    expect(await balanceMinor(alice)).toBe(800);

    ddb.on(TransactWriteCommand).callsFake((input) => forward(new TransactWriteCommand(input)));
    const retried = await sendAs(alice, { toAddress: bob, amount: 2 }, headers);
    expect(retried.statusCode).toBe(200);
    expect(retried.headers?.['idempotent-replayed']).toBe('true');
    expect(retried.json).toMatchObject({ fromAddress: alice, toAddress: bob, amount: 2 });
    expect(await balanceMinor(alice)).toBe(800);
    expect(await balanceMinor(bob)).toBe(200);
  });
});
