import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { InvalidParameterError } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createHistoryRepository } from '#shared/wallet/history-repository.ts';
import { moneyJson } from '#shared/wallet/money.ts';
import { loadWalletSettings, type WalletSettings } from '#shared/wallet/settings.ts';
import { makeListTransfers } from '#shared/wallet/transfer-history.ts';

export interface ListTransfersFunctionDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly settings: WalletSettings;
}

const DEFAULT_LIMIT = 20;

/** `limit` as sent: 1 to 100, written as a plain integer. */
function limitOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,3}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= 100))
    throw new InvalidParameterError('limit must be an integer from 1 to 100');
  return limit;
}

/** The composition root of `GET /api/wallet/transfers`, and its edge: query parameters in, exact decimals out. */
export function createListTransfersHandler({
  client,
  tableName,
  settings,
}: ListTransfersFunctionDependencies) {
  const listTransfers = makeListTransfers({ history: createHistoryRepository({ client, tableName }) });
  return httpHandler({
    operationId: 'listTransfers',
    run: async ({ principal, query }) => {
      const page = await listTransfers({
        sub: principal.sub,
        limit: limitOf(query.limit),
        cursor: query.cursor,
      });
      // JSON.stringify leaves out what is undefined: a deposit's counterparty, the last page's cursor.
      const items = page.items.map((item) => ({
        transferId: item.transferId,
        direction: item.direction,
        kind: item.kind,
        counterparty: item.counterparty,
        amount: moneyJson(item.amountMinor, settings.currency),
        currency: item.currency,
        createdAt: item.createdAt,
        balanceAfter: moneyJson(item.balanceAfterMinor, settings.currency),
      }));
      return { statusCode: 200, body: { items, nextCursor: page.nextCursor } };
    },
  });
}

/** `GET /api/wallet/transfers`: the caller's movements, newest first. */
export const handler = createListTransfersHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  settings: loadWalletSettings(),
});
