import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createCreditStore } from '#shared/wallet/dynamodb/credit-store.ts';
import type { WalletTableAccess } from '#shared/wallet/dynamodb/table-access.ts';
import { makeSweepBatches, type SweepResult } from '#shared/wallet/hot-wallet/sweep-batches.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';

/**
 * The composition root of the sweep (EventBridge, every few minutes): completes the batches posted
 * and not completed whose poster stopped (shared/wallet/hot-wallet/sweep-batches.ts). Its metrics
 * beside the poster's: `CreditsPosted` (the credits of the batches it completed, which no poster
 * call counted) and `BatchesSwept`; a batch it could not complete is `SweepFailures`, logged, and
 * left to the stream and, past UNCOMPLETED_NAMED_AFTER_MS, to the ledger audit.
 */
export function createSweepBatchesHandler(access: WalletTableAccess) {
  const sweep = makeSweepBatches({ store: createCreditStore(access), clock: systemClock });
  const metrics = routeMetrics('sweep-batches');
  return async (): Promise<SweepResult> => {
    const result = await sweep();
    publish(metrics, [
      ['CreditsPosted', result.creditsPosted],
      ['BatchesSwept', result.completed],
      ['SweepFailures', result.failed],
    ]);
    if (result.failed > 0) logger.error('sweep: batches posted it could not complete', { ...result });
    else if (result.found > 0)
      logger.info('sweep: completed batches posted and not completed', { ...result });
    return result;
  };
}

export const handler = createSweepBatchesHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
});
