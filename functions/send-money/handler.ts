import { randomUUID } from 'node:crypto';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createTransferLedger } from '#shared/wallet/dynamodb/transfer-store.ts';
import { type IdSource, systemClock } from '#shared/wallet/model/ports.ts';
import { loadWalletSettings, type WalletFunctionDependencies } from '#shared/wallet/model/settings.ts';
import { makeSendMoney } from '#shared/wallet/send/send-money.ts';
import { sendMoneyHttpHandler } from './http-adapter.ts';

const randomIds: IdSource = { next: randomUUID };

/** The composition root of `POST /api/wallet/send`: the edge, the use case and the ledger, wired. */
export function createSendMoneyHandler({ client, tableName, settings }: WalletFunctionDependencies) {
  const ledger = createTransferLedger({ client, tableName });
  const sendMoney = makeSendMoney({ ledger, clock: systemClock, ids: randomIds, settings });
  return sendMoneyHttpHandler({ sendMoney, settings });
}

/**
 * `POST /api/wallet/send`: moves money from the caller's wallet. A retried Idempotency-Key makes at
 * most one transfer while its record lasts (IDEMPOTENCY_TTL_SECONDS); after that it is a new key.
 */
export const handler = createSendMoneyHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  settings: loadWalletSettings(),
});
