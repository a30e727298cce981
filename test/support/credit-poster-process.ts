/**
 * A credit poster in a process of its own, for the test that kills it mid-batch
 * (test/integration/credit-poster-stream.test.ts): the local stream poller on the table's stream,
 * the real poster handler behind it, its DynamoDB client on `POSTER_ENDPOINT` (a fault proxy that
 * keeps its completions from DynamoDB, so that it is killed between a posting and its entries).
 * Runs until it is killed.
 */
import { createPostCreditsHandler } from '#functions/post-credits/handler.ts';
import { startStreamPoller } from '#infra/local/stream-poller.ts';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';

const tableName = requireEnv('POSTER_TABLE');
const poster = createPostCreditsHandler({
  client: createDocumentClient({ endpoint: requireEnv('POSTER_ENDPOINT') }),
  tableName,
});
await startStreamPoller({
  endpoint: requireEnv('STREAM_ENDPOINT'),
  tableName,
  invoke: poster,
  failureFile: requireEnv('POSTER_FAILURE_FILE'),
  settings: { maxBatchingWindowSeconds: 0.5, pollIntervalMs: 100 },
});
process.stdout.write('polling\n');
