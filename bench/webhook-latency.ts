/**
 * Webhook latency through `npm start` (its own process, conflict mode): CLIENTS payers each make
 * PAYMENTS_EACH payments into ONE merchant with a registered endpoint on loopback that verifies
 * each delivery with `standardwebhooks`. Prints the p50/p99 of `transfer.received` after the
 * payment's 200 and of `transfer.completed` after the money became spendable (the event's own
 * `timestamp`: the commit of a direct credit, the posting of one in transit). Issue 46's budget:
 * both ≤ 1 s p99, locally. Run: `npm run bench:webhooks` (not part of `npm run bench`'s verdicts yet).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, LOCAL_AWS_ENV } from '#infra/local/dynamodb-local.ts';
import { signLocalToken } from '#infra/local/issuer.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { makeRecordDeposit } from '#shared/wallet/deposit/record-deposit.ts';
import { createDepositStore } from '#shared/wallet/dynamodb/deposit-store.ts';
import { startWebhookReceiver } from '../test/support/webhook-receiver.ts';
import { startGateway, stopGateway } from './e2e.ts';
import { percentile } from './stats.ts';

const CLIENTS = Number(process.env.WEBHOOK_BENCH_CLIENTS ?? 20);
const PAYMENTS_EACH = Number(process.env.WEBHOOK_BENCH_PAYMENTS ?? 5);
const BUDGET_MS = 1_000;

// The local stack's region and dummy credentials, for this process's own DynamoDB client.
Object.assign(process.env, LOCAL_AWS_ENV);
const stateDir = await mkdtemp(join(tmpdir(), 'webhook-bench-'));
const port = await freePort();
const gateway = await startGateway(port, stateDir, []);
const receiver = await startWebhookReceiver();
try {
  const base = `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, token: string, json?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      ...(json ? { body: JSON.stringify(json) } : {}),
    });
    return {
      status: response.status,
      json: (await response.json().catch(() => undefined)) as Record<string, unknown>,
    };
  };
  const merchant = `merchant-${randomUUID()}`;
  const merchantToken = await signLocalToken({
    sub: merchant,
    scope: 'read:wallet read:webhooks write:webhooks',
    port,
    stateDir,
  });
  await call('GET', '/api/wallet/balance', merchantToken);
  const registered = await call('POST', '/api/wallet/webhooks', merchantToken, { url: receiver.url });
  if (registered.status !== 201) throw new Error(`registering answered ${registered.status}`);
  receiver.secrets.push(String(registered.json.secret));

  const stack = await readRunningStack(port, stateDir);
  if (!stack) throw new Error('the stack is not running');
  const client = createDocumentClient({ endpoint: stack.dynamodbEndpoint });
  const recordDeposit = makeRecordDeposit({
    deposits: createDepositStore({ client, tableName: stack.env.WALLETS_TABLE_NAME as string }),
    ids: { next: randomUUID },
  });
  const payers = Array.from({ length: CLIENTS }, () => `payer-${randomUUID()}`);
  for (const address of payers) {
    // The same deposit id on every try: a deposit is recorded once, however often it is retried.
    const deposit = {
      depositId: randomUUID(),
      address,
      amountMinor: 100_00,
      currency: 'USD',
      createdAt: new Date().toISOString(),
    };
    for (let tries = 1; ; tries++) {
      try {
        await recordDeposit(deposit);
        break;
      } catch (error) {
        if (tries >= 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
  client.destroy();
  const tokens = await Promise.all(
    payers.map((sub) => signLocalToken({ sub, scope: 'write:wallet', port, stateDir })),
  );

  const answeredAt = new Map<string, number>();
  let failed = 0;
  await Promise.all(
    tokens.map(async (token) => {
      for (let n = 0; n < PAYMENTS_EACH; n++) {
        const sent = await call('POST', '/api/wallet/send', token, { toAddress: merchant, amount: 0.01 });
        if (sent.status === 200) answeredAt.set(String(sent.json.transferId), Date.now());
        else failed++;
      }
    }),
  );
  const paid = answeredAt.size;
  const ofType = (type: string) =>
    receiver.received.filter((event) => event.type === type && event.data.address === merchant);
  await receiver.until(
    () =>
      new Set(ofType('transfer.received').map((e) => e.id)).size >= paid &&
      new Set(ofType('transfer.completed').map((e) => e.id)).size >= paid,
    120_000,
  );
  const first = (type: string) => {
    const byId = new Map<string, (typeof receiver.received)[number]>();
    for (const event of ofType(type)) if (!byId.has(event.id)) byId.set(event.id, event);
    return [...byId.values()];
  };
  const received = first('transfer.received').map(
    (e) => e.receivedAt - (answeredAt.get(String(e.data.transferId)) ?? e.receivedAt),
  );
  const completed = first('transfer.completed').map((e) => e.receivedAt - Date.parse(e.timestamp));
  const pending = first('transfer.received').filter((e) => e.data.status === 'pending').length;
  const line = (name: string, values: number[]) =>
    `${name}: p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms (budget ${BUDGET_MS} ms: ${percentile(values, 99) <= BUDGET_MS ? 'within' : 'OVER'})`;
  console.log(
    `${CLIENTS} payers × ${PAYMENTS_EACH} payments into one merchant: ${paid} paid (${failed} refused), ${pending} through the clearing account`,
  );
  console.log(line('transfer.received after the 200', received));
  console.log(line('transfer.completed after spendable', completed));
  console.log(`receiver: ${receiver.unverified.length} deliveries that did not verify`);
} finally {
  await receiver.close();
  await stopGateway(gateway);
  await rm(stateDir, { recursive: true, force: true });
}
