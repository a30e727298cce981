import { requireEnv, requireIntegerEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createAuditHandler } from './audit-function.ts';

/** The composition root of the scheduled ledger audit: its settings read once, at cold start. */
export const handler = createAuditHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
  segments: requireIntegerEnv('AUDIT_SEGMENTS'),
});
