import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { createSendMoneyHandler } from '#functions/send-money/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { entryKey, walletAccount } from '#shared/wallet/ledger-keys.ts';
import { loadWalletSettings } from '#shared/wallet/settings.ts';
import { invoke, sendEvent, uniqueSub } from './events.ts';
import { createLedgerTable, fund, type TestLedger } from './wallet.ts';

/** A ledger table of a test's own with some history: three wallets, three deposits, four transfers. */
export interface SeededLedger {
  readonly tableName: string;
  readonly wallets: TestLedger;
  /** Sends `amount` (its JSON text) from one wallet to another through the send-money function. */
  readonly send: (from: string, to: string, amount: string) => Promise<void>;
  readonly alice: string;
  readonly bob: string;
  readonly carol: string;
}

/** What the three deposits of {@link seedLedger} issue, in minor units. */
export const SEEDED_ISSUE_MINOR = 15_001;

/**
 * Funds alice 100.00, bob 50.00 and carol 0.01 (deposits dated `fundedAt`), then sends, in this
 * order, 12.34 alice → bob, 0.01 bob → carol, 0.02 carol → alice, 1.00 alice → carol: so bob's
 * entry 3 is his 0.01 to carol. The transfers are dated now, as the function dates them.
 */
export async function seedLedger(fundedAt = new Date()): Promise<SeededLedger> {
  const { tableName, wallets } = await createLedgerTable();
  const [alice, bob, carol] = [uniqueSub('alice'), uniqueSub('bob'), uniqueSub('carol')];
  await Promise.all([
    fund(alice, 10_000, wallets, fundedAt),
    fund(bob, 5_000, wallets, fundedAt),
    fund(carol, 1, wallets, fundedAt),
  ]);
  const handler = createSendMoneyHandler({
    client: createDocumentClient({ endpoint: inject('env').DYNAMODB_ENDPOINT }),
    tableName,
    settings: loadWalletSettings(),
  });
  const send = async (from: string, to: string, amount: string) => {
    const response = await invoke(handler, sendEvent(from, `{"toAddress":"${to}","amount":${amount}}`));
    if (response.statusCode !== 200) throw new Error(`send ${amount} answered ${response.statusCode}`);
  };
  await send(alice, bob, '12.34');
  await send(bob, carol, '0.01');
  await send(carol, alice, '0.02');
  await send(alice, carol, '1.00');
  return { tableName, wallets, send, alice, bob, carol };
}

/**
 * Corrupts a seeded ledger: bob's entry 3 (his 0.01 to carol) claims to have moved 0.02, so his
 * running balance, its mirror and its transfer disagree with it. Returns the entry's key.
 */
export async function misstateBobsPayment(client: DynamoDBDocumentClient, ledger: SeededLedger) {
  const corrupted = entryKey(walletAccount(ledger.bob), 3);
  await client.send(
    new UpdateCommand({
      TableName: ledger.tableName,
      Key: { pk: corrupted },
      UpdateExpression: 'SET amountMinor = :wrong',
      ConditionExpression: 'amountMinor = :right',
      ExpressionAttributeValues: { ':wrong': 2, ':right': 1 },
    }),
  );
  return corrupted;
}
