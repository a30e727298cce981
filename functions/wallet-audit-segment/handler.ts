import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createS3Client } from '#shared/s3/client.ts';
import { createS3PartialStore, PARTIALS_BUCKET_ENV } from '#shared/wallet/audit/partial-store.ts';
import { createSegmentHandler } from './segment-function.ts';

/** The composition root of a child of the scheduled ledger audit: its settings read once, at cold start. */
export const handler = createSegmentHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  partials: createS3PartialStore(createS3Client(), requireEnv(PARTIALS_BUCKET_ENV)),
});
