/**
 * A webhook dispatcher in a process of its own, for the test that kills it mid-attempt
 * (test/integration/webhook-dispatch-faults.test.ts): the real dispatcher on the table its
 * environment names (WEBHOOKS_TABLE_NAME, DYNAMODB_ENDPOINT, WEBHOOK_SECRETS_KEY, …), polling until
 * it is killed.
 */
import { createWebhookDispatcher } from '#functions/dispatch-webhooks/handler.ts';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { runDispatcher } from '#shared/webhooks/dispatch/dispatch-loop.ts';
import { secretSealerFromEnv } from '#shared/webhooks/secrets/keeper.ts';
import { loopbackDeliver } from './webhook-dispatcher.ts';

const dispatcher = createWebhookDispatcher({
  client: createDocumentClient({ endpoint: requireEnv('DYNAMODB_ENDPOINT') }),
  tableName: requireEnv('WEBHOOKS_TABLE_NAME'),
  sealer: secretSealerFromEnv(),
  mode: 'local',
  schedule: [0, 1, 1, 1],
  leaseMs: Number(requireEnv('WEBHOOK_LEASE_MS')),
  deliver: loopbackDeliver(),
});
process.stdout.write('dispatching\n');
await runDispatcher(dispatcher, { pollMs: 100 });
