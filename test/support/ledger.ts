import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { expect, inject } from 'vitest';
import { createSendMoneyHandler } from '#functions/send-money/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { routeOf } from '#shared/routes.ts';
import { entryItem, entryKey } from '#shared/wallet/dynamodb/keys.ts';
import { sideEntry } from '#shared/wallet/dynamodb/ledger-commit.ts';
import { makePostCredits } from '#shared/wallet/hot-wallet/post-credits.ts';
import { makeHotWalletRouter } from '#shared/wallet/hot-wallet/router.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { makeSendMoney, type SendMoneyResult } from '#shared/wallet/send/send-money.ts';
import { invoke, sendEvent, uniqueSub } from './events.ts';
import { createLedgerTable, fund, ledgerOf, type TestLedger } from './wallet.ts';

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
  // One at a time: every deposit moves the issuance account, so parallel ones only wait for each other.
  await fund(alice, 10_000, wallets, fundedAt);
  await fund(bob, 5_000, wallets, fundedAt);
  await fund(carol, 1, wallets, fundedAt);
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

/**
 * A ledger table of a test's own whose shop is a hot wallet: payments to it go through the
 * clearing account, written by the real repositories (the send-money use case on the transfer
 * ledger, the credit poster on the credit ledger), as the functions write them.
 */
export interface HotLedger {
  readonly tableName: string;
  readonly wallets: TestLedger;
  readonly shop: string;
  /** Funded with {@link PAYER_MINOR} each. */
  readonly payers: readonly string[];
  /** Pays `amountMinor` from `payer` to `to` (the shop by default), dated `at` (now): the transfer id. */
  pay(payer: string, amountMinor: number, options?: PayOptions): Promise<string>;
  /** The same payment, answered in full: a replay of its key answers the status it has now. */
  send(payer: string, amountMinor: number, options?: PayOptions): Promise<SendMoneyResult>;
  /** Posts these credits to the shop as the credit poster does, dated `at` (now): how many it posted. */
  post(transferIds: readonly string[], at?: Date): Promise<number>;
}

interface PayOptions {
  readonly to?: string;
  readonly at?: Date;
  readonly idempotencyKey?: string;
}

export const PAYER_MINOR = 10_000;

/**
 * The time a payment of these tests has to answer: the send function's timeout (shared/routes.ts),
 * as Lambda gives it to the function. It was 10 s, which after a commit's worst case and the
 * margin (9 s: send-money.ts) left 1 s to read and write, and a whole-suite run once took longer
 * behind a posting's transactions at DynamoDB Local: "busy" with nothing refused.
 */
/** The send function's time (its route's timeout): what a payment has to answer in, deployed. */
export function sendFunctionMs(): number {
  const { timeoutSeconds } = routeOf('sendMoney');
  if (timeoutSeconds === undefined) throw new Error('The send route names its timeout');
  return timeoutSeconds * 1_000;
}

/**
 * A hot ledger with `payers` payers funded at `fundedAt` and an empty shop, marked hot for an hour.
 * Its payments and postings go through `client` when given (a fault proxy's); the set-up goes to
 * DynamoDB Local directly.
 */
export async function createHotLedger(
  payers: number,
  fundedAt = new Date(),
  client?: DynamoDBDocumentClient,
): Promise<HotLedger> {
  const { tableName, wallets } = await createLedgerTable();
  const moving = client ? ledgerOf({ client, tableName }) : wallets;
  const shop = uniqueSub('shop');
  const funded = Array.from({ length: payers }, () => uniqueSub('payer'));
  // One at a time: every deposit moves the issuance account, so parallel ones only wait for each other.
  for (const address of funded) await fund(address, PAYER_MINOR, wallets, fundedAt);
  await wallets.openWallet(shop, fundedAt.toISOString());
  await wallets.hotMarker.markHot(shop, Date.now() + 3_600_000);
  const settings = loadWalletSettings();
  const clockAt = (at?: Date) => (at ? { now: () => at.getTime() } : systemClock);
  async function send(
    payer: string,
    amountMinor: number,
    { to = shop, at, idempotencyKey }: PayOptions = {},
  ): Promise<SendMoneyResult> {
    const clock = clockAt(at);
    const sendMoney = makeSendMoney({
      transfers: moving.transfers,
      router: makeHotWalletRouter({ claims: moving.claims, marker: moving.hotMarker, clock }),
      clock,
      ids: { next: () => randomUUID() },
      settings,
    });
    return sendMoney({
      sub: payer,
      toAddress: to,
      amountMinor,
      idempotencyKey,
      answerBy: Date.now() + sendFunctionMs(),
    });
  }
  return {
    tableName,
    wallets,
    shop,
    payers: funded,
    async pay(payer, amountMinor, options) {
      return (await send(payer, amountMinor, options)).transfer.transferId;
    },
    send,
    async post(transferIds, at) {
      const post = makePostCredits({ ledger: moving.credits, clock: clockAt(at) });
      // The credits as the stream would announce them: as the payers' transactions wrote them.
      const { credits } = await moving.credits.read(shop, transferIds);
      return (await post(shop, credits)).posted;
    },
  };
}

/**
 * A hot ledger at rest: three payers paid the shop 1.00, 2.00, 0.03 and 0.50, the first two
 * posted and the last two still in transit, and one payer paid another 0.10 directly.
 */
export async function seedHotLedger(fundedAt = new Date()) {
  const ledger = await createHotLedger(3, fundedAt);
  const [first, second, third] = ledger.payers as [string, string, string];
  const posted = [await ledger.pay(first, 100), await ledger.pay(second, 200)];
  const inTransit = [await ledger.pay(third, 3), await ledger.pay(first, 50)];
  const direct = await ledger.pay(second, 10, { to: third });
  if ((await ledger.post(posted)) !== 2) throw new Error('the poster did not post both credits');
  return { ...ledger, posted, inTransit, direct };
}

/** What {@link seedHotLedger} leaves in transit, in minor units. */
export const SEEDED_IN_TRANSIT_MINOR = 53n;

/** The entry of a wallet's first deposit as the ledger writes it: what the stream hands the deriver. */
export function firstDepositEntry(address: string, amountMinor: number): Record<string, unknown> {
  return entryItem(
    sideEntry(
      {
        transferId: randomUUID(),
        transferKind: 'deposit',
        amountMinor,
        currency: 'USD',
        createdAt: new Date().toISOString(),
      },
      { account: `W#${address}`, state: { exists: true, balance: 0n, seq: 0 } },
      'in',
      { account: 'ISSUANCE', seq: 1 },
    ),
    false,
  );
}

/**
 * Batches these credits of the shop's and posts the batch into its wallet, dated `postedAt`, then
 * stops, as a poster that died between its two steps: no completion (the sweep's, minutes later).
 */
export async function postBatchWithoutCompleting(
  hot: HotLedger,
  transferIds: readonly string[],
  postedAt = new Date().toISOString(),
) {
  const { credits } = await hot.wallets.credits.read(hot.shop, transferIds);
  expect(credits).toHaveLength(transferIds.length);
  const batch = { batchId: randomUUID(), address: hot.shop, credits };
  expect(await hot.wallets.credits.batch(batch, new Date().toISOString())).toBe('batched');
  const { wallet } = await hot.wallets.credits.read(hot.shop, []);
  const posted = await hot.wallets.credits.postBatches({
    address: hot.shop,
    wallet,
    batches: [batch],
    postedAt,
  });
  expect(posted.kind).toBe('posted');
  return batch;
}
