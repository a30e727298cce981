import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { type Clock, type IdSource, systemClock } from '#shared/wallet/ports.ts';
import { makeSendMoney } from '#shared/wallet/send-money.ts';
import { loadWalletSettings, type WalletSettings } from '#shared/wallet/settings.ts';
import { createTransferLedger } from '#shared/wallet/transfer-ledger.ts';
import { sendMoneyHttpHandler } from './http-adapter.ts';

export interface SendMoneyFunctionDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly settings: WalletSettings;
  readonly clock?: Clock;
  readonly ids?: IdSource;
}

const randomIds: IdSource = { next: randomUUID };

/** The composition root of `POST /api/wallet/send`: the edge, the use case and the ledger, wired. */
export function createSendMoneyHandler({
  client,
  tableName,
  settings,
  clock = systemClock,
  ids = randomIds,
}: SendMoneyFunctionDependencies) {
  const ledger = createTransferLedger({ client, tableName });
  return sendMoneyHttpHandler({ sendMoney: makeSendMoney({ ledger, clock, ids, settings }), settings });
}

/** `POST /api/wallet/send`: moves money from the caller's wallet, exactly once per Idempotency-Key. */
export const handler = createSendMoneyHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  settings: loadWalletSettings(),
});
