import { randomUUID } from 'node:crypto';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createDirectClaimStore } from '#shared/wallet/dynamodb/direct-claim-store.ts';
import { createHotMarkerStore } from '#shared/wallet/dynamodb/hot-marker-store.ts';
import type { WalletFunctionDependencies } from '#shared/wallet/dynamodb/table-access.ts';
import { createTransferStore } from '#shared/wallet/dynamodb/transfer-store.ts';
import { makeHotWalletRouter } from '#shared/wallet/hot-wallet/router.ts';
import { type IdSource, systemClock } from '#shared/wallet/model/ports.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { makeSendMoney } from '#shared/wallet/send/send-money.ts';
import { sendMoneyHttpHandler } from './http-adapter.ts';

const randomIds: IdSource = { next: randomUUID };

/** The composition root of `POST /api/wallet/send`: the edge, the use case, the router and the stores, wired. */
export function createSendMoneyHandler({ client, tableName, settings }: WalletFunctionDependencies) {
  const access = { client, tableName };
  const router = makeHotWalletRouter({
    claims: createDirectClaimStore(access),
    marker: createHotMarkerStore(access),
    clock: systemClock,
  });
  const transfers = createTransferStore(access);
  const sendMoney = makeSendMoney({ transfers, router, clock: systemClock, ids: randomIds, settings });
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
