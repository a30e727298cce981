import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { NotFoundError } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createHistoryStore } from '#shared/wallet/dynamodb/history-store.ts';
import type { WalletFunctionDependencies } from '#shared/wallet/dynamodb/table-access.ts';
import { makeGetTransfer } from '#shared/wallet/history/transfer-history.ts';
import { moneyJson } from '#shared/wallet/model/money.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';

/** Transfer ids are UUIDs: anything else names no transfer, and costs no read. */
const TRANSFER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The composition root of `GET /api/wallet/transfers/{transferId}`, and its edge. */
export function createGetTransferHandler({ client, tableName, settings }: WalletFunctionDependencies) {
  const getTransfer = makeGetTransfer({ history: createHistoryStore({ client, tableName }) });
  return httpHandler({
    operationId: 'getTransfer',
    run: async ({ principal, pathParameters }) => {
      const transferId = pathParameters.transferId ?? '';
      if (!TRANSFER_ID.test(transferId)) throw new NotFoundError('No transfer of yours has this id');
      const movement = await getTransfer({ sub: principal.sub, transferId });
      const body = {
        transferId: movement.transferId,
        kind: movement.transferKind,
        ...(movement.fromAddress === undefined ? {} : { fromAddress: movement.fromAddress }),
        toAddress: movement.toAddress,
        amount: moneyJson(movement.amountMinor, settings.currency),
        currency: movement.currency,
        status: movement.status,
        createdAt: movement.createdAt,
      };
      return { statusCode: 200, body };
    },
  });
}

/**
 * `GET /api/wallet/transfers/{transferId}`: one movement, for its parties only: payer and
 * recipient, or a deposit's recipient alone.
 */
export const handler = createGetTransferHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  settings: loadWalletSettings(),
});
