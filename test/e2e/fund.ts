import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { makeRecordDeposit } from '#shared/wallet/deposit/record-deposit.ts';
import { createDepositStore } from '#shared/wallet/dynamodb/deposit-store.ts';
import { createHotMarkerStore } from '#shared/wallet/dynamodb/hot-marker-store.ts';
import { inParallel } from '../support/bank.ts';
import { gateway } from './http.ts';

/**
 * Funds wallets as `wallet:fund` does (its repository), in the stack's table, a few at a time. Straight
 * to the stack's DynamoDB Local, as the tests' other seeding: through the stack's conflict proxy, deposits
 * that all write the issuance account are what contends, not what the test is about.
 */
export async function fund(addresses: readonly string[], amountMinor: number): Promise<void> {
  const stack = await readRunningStack(gateway.port, gateway.stateDir);
  if (!stack) throw new Error('The e2e stack is not running');
  const client = createDocumentClient({ endpoint: stack.dynamodbLocalEndpoint });
  try {
    const recordDeposit = makeRecordDeposit({
      deposits: createDepositStore({ client, tableName: stack.env.WALLETS_TABLE_NAME as string }),
      ids: { next: randomUUID },
    });
    await inParallel(addresses.length, 2, async (i) => {
      const deposit = {
        depositId: randomUUID(),
        address: addresses[i] as string,
        amountMinor,
        currency: 'USD',
        createdAt: new Date().toISOString(),
      };
      expect(await recordDeposit(deposit)).toEqual({ kind: 'recorded' });
    });
  } finally {
    client.destroy();
  }
}

/**
 * Marks `address` hot in the stack's table for `forMs`, as a payment that met another there would:
 * its payments go through the clearing account and the poster posts them. For a test about what
 * happens while credits are in transit, which must not hang on whether this machine's payments
 * happened to meet.
 */
export async function markHot(address: string, forMs: number): Promise<void> {
  const stack = await readRunningStack(gateway.port, gateway.stateDir);
  if (!stack) throw new Error('The e2e stack is not running');
  const client = createDocumentClient({ endpoint: stack.dynamodbLocalEndpoint });
  try {
    const until = Date.now() + forMs;
    const marker = createHotMarkerStore({ client, tableName: stack.env.WALLETS_TABLE_NAME as string });
    expect(await marker.markHot(address, until)).toBe(until);
  } finally {
    client.destroy();
  }
}
