import { randomUUID } from 'node:crypto';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { createTableInput, tables } from '#shared/dynamodb/tables.ts';
import type { BalanceStore } from '#shared/wallet/balance/ports.ts';
import { makeRecordDeposit } from '#shared/wallet/deposit/record-deposit.ts';
import { createBalanceStore } from '#shared/wallet/dynamodb/balance-store.ts';
import { createCreditStore } from '#shared/wallet/dynamodb/credit-store.ts';
import { createDepositStore } from '#shared/wallet/dynamodb/deposit-store.ts';
import { createDirectClaimStore } from '#shared/wallet/dynamodb/direct-claim-store.ts';
import { createHotMarkerStore } from '#shared/wallet/dynamodb/hot-marker-store.ts';
import { createTransferStore } from '#shared/wallet/dynamodb/transfer-store.ts';
import type { CreditStore, DirectClaimStore, HotMarkerStore } from '#shared/wallet/hot-wallet/ports.ts';
import type { TransferStore } from '#shared/wallet/send/ports.ts';

/** A wallet ledger with its deposits: what the functions use, and what `wallet:fund` adds. */
export type TestLedger = BalanceStore & { recordDeposit: ReturnType<typeof makeRecordDeposit> } & {
  /** What sending money writes with. */
  transfers: TransferStore;
  /** What the hot-wallet router claims and marks with. */
  claims: DirectClaimStore;
  hotMarker: HotMarkerStore;
  /** What the credit poster writes with. */
  credits: CreditStore;
};

/** The wallet ledger of `tableName` on `client` (a fault proxy's, or DynamoDB Local's own). */
export const ledgerOf = (access: {
  client: ReturnType<typeof createDocumentClient>;
  tableName: string;
}): TestLedger => ({
  ...createBalanceStore(access),
  recordDeposit: makeRecordDeposit({ deposits: createDepositStore(access), ids: { next: randomUUID } }),
  transfers: createTransferStore(access),
  claims: createDirectClaimStore(access),
  hotMarker: createHotMarkerStore(access),
  credits: createCreditStore(access),
});

/**
 * The wallet ledger of the test run's table, straight on DynamoDB Local (never through a fault
 * proxy): built when first asked for, so no test depends on when this module was imported.
 */
let direct: TestLedger | undefined;
export function walletLedger(): TestLedger {
  direct ??= ledgerOf({
    // The run's own settings, whatever a fault test did to this file's environment since.
    client: createDocumentClient({ endpoint: inject('env').DYNAMODB_ENDPOINT }),
    tableName: inject('env').WALLETS_TABLE_NAME as string,
  });
  return direct;
}

/**
 * Funds a wallet through the same repository code as `npm run wallet:fund` (which opens it),
 * dated `createdAt` (now by default; earlier for a deposit the ledger audit counts as settled).
 */
export async function fund(
  address: string,
  amountMinor: number,
  wallets = walletLedger(),
  createdAt = new Date(),
): Promise<void> {
  const outcome = await wallets.recordDeposit({
    depositId: randomUUID(),
    address,
    amountMinor,
    currency: 'USD',
    createdAt: createdAt.toISOString(),
  });
  if (outcome.kind !== 'recorded') throw new Error(`Funding ${address} was refused: ${outcome.kind}`);
}

/** Opens an empty wallet, as its owner's first call does, so that it can receive money. */
export const open = (address: string, wallets = walletLedger()): Promise<'open' | 'lookalike'> =>
  wallets.openWallet(address, new Date().toISOString());

/**
 * A wallets table of its own on DynamoDB Local, laid out by `tables.ts` like the run's: for tests
 * that audit a whole ledger (others' test data, some written raw on purpose, stays out of it).
 */
export async function createLedgerTable(): Promise<{ tableName: string; wallets: TestLedger }> {
  const tableName = `ledger-${randomUUID()}`;
  const client = createDocumentClient({ endpoint: inject('env').DYNAMODB_ENDPOINT });
  await client.send(new CreateTableCommand(createTableInput(tableName, tables.wallets)));
  return { tableName, wallets: ledgerOf({ client, tableName }) };
}
