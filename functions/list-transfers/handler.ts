import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageLimitParameter } from '#shared/http/parameters.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createHistoryStore } from '#shared/wallet/dynamodb/history-store.ts';
import type { WalletFunctionDependencies } from '#shared/wallet/dynamodb/table-access.ts';
import { makeListTransfers } from '#shared/wallet/history/transfer-history.ts';
import { matchingOf } from '#shared/wallet/model/matching.ts';
import { moneyJson } from '#shared/wallet/model/money.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';

/** The composition root of `GET /api/wallet/transfers`, and its edge: query parameters in, exact decimals out. */
export function createListTransfersHandler({ client, tableName, settings }: WalletFunctionDependencies) {
  const listTransfers = makeListTransfers({ history: createHistoryStore({ client, tableName }) });
  return httpHandler({
    operationId: 'listTransfers',
    run: async ({ principal, query }) => {
      const page = await listTransfers({
        sub: principal.sub,
        limit: pageLimitParameter(query.limit),
        cursor: query.cursor,
      });
      const money = (minor: number | bigint) => moneyJson(minor, settings.currency);
      const body = {
        items: page.items.map((item) => ({
          transferId: item.transferId,
          direction: item.direction,
          kind: item.kind,
          // Absent for a deposit: JSON.stringify leaves out an undefined property.
          counterparty: item.counterparty,
          amount: money(item.amountMinor),
          currency: item.currency,
          createdAt: item.createdAt,
          balanceAfter: money(item.balanceAfterMinor),
          status: item.status,
          ...matchingOf(item),
        })),
        ...(page.pending
          ? {
              pending: page.pending.map((credit) => ({
                transferId: credit.transferId,
                counterparty: credit.fromAddress,
                amount: money(credit.amountMinor),
                currency: credit.currency,
                createdAt: credit.createdAt,
                status: 'pending' as const,
              })),
            }
          : {}),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
      return { statusCode: 200, body };
    },
  });
}

/** `GET /api/wallet/transfers`: the caller's movements, newest first. */
export const handler = createListTransfersHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  settings: loadWalletSettings(),
});
