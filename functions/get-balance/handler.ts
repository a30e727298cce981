import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { makeGetBalance } from '#shared/wallet/balance/get-balance.ts';
import { createBalanceStore } from '#shared/wallet/dynamodb/balance-store.ts';
import type { WalletFunctionDependencies } from '#shared/wallet/dynamodb/table-access.ts';
import { createWalletOpening } from '#shared/wallet/dynamodb/wallet-opening.ts';
import { moneyJson } from '#shared/wallet/model/money.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';

/** The composition root of `GET /api/wallet/balance`, and its edge: the balance as an exact decimal. */
export function createGetBalanceHandler({ client, tableName, settings }: WalletFunctionDependencies) {
  const access = { client, tableName };
  const wallets = { ...createBalanceStore(access), openWallet: createWalletOpening(access) };
  const getBalance = makeGetBalance({ wallets, clock: systemClock });
  return httpHandler({
    operationId: 'getBalance',
    run: async ({ principal }) => {
      const { address, balanceMinor, pendingMinor, updatedAt } = await getBalance(principal.sub);
      const body = {
        address,
        balance: moneyJson(balanceMinor, settings.currency),
        pending: moneyJson(pendingMinor, settings.currency),
        currency: settings.currency.code,
        ...(updatedAt ? { updatedAt } : {}),
      };
      return { statusCode: 200, body };
    },
  });
}

/** `GET /api/wallet/balance`: the balance of the caller's own wallet. */
export const handler = createGetBalanceHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  settings: loadWalletSettings(),
});
