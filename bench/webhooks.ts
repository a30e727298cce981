/**
 * Webhooks through `npm start` (its own process, conflict mode), issue 46's scenario: `clients`
 * payers each make `paymentsEach` payments into ONE merchant (it goes hot, its credits are posted
 * in batches) with a registered endpoint on loopback that verifies each delivery with
 * `standardwebhooks`. Checks that every payment is told once (one `transfer.received` and one
 * `transfer.completed` per payment, distinct ids, the merchant's `seq` gap-free, every delivery
 * verified) and measures `transfer.received` after the payment's 200 and `transfer.completed` after
 * the money became spendable (the event's own `timestamp`: the commit of a direct credit, the
 * posting of one in transit). Budget: both ≤ 1 s p99, locally (`LIMITS.webhookP99Ms`).
 *
 * `npm run bench:webhooks` (bench/webhook-latency.ts) runs it at the issue's count with its fault
 * and isolation modes; `npm run bench` runs it smaller, as a budget line (bench/budgets.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { freePort, LOCAL_AWS_ENV } from '#infra/local/dynamodb-local.ts';
import { signLocalToken } from '#infra/local/issuer.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { makeRecordDeposit } from '#shared/wallet/deposit/record-deposit.ts';
import { createDepositStore } from '#shared/wallet/dynamodb/deposit-store.ts';
import { type ReceivedEvent, startWebhookReceiver } from '../test/support/webhook-receiver.ts';
import { startGateway, stopGateway } from './processes.ts';

/** The e2e suite's schedule (test/support/global-setup.ts): ten attempts in about 25 s. */
const SHORT_SCHEDULE = '0,0.5,1,2,2,3,3,4,5,5';
const OUTAGE_MS = 10_000;

export interface WebhookScenario {
  readonly clients: number;
  readonly paymentsEach: number;
  /**
   * The receiver answers 500 to 30 % of requests (each event at most once) and is shut for 10 s
   * in the middle of the payments; the stack retries on the e2e suite's shortened schedule.
   * Latency then measures the schedule, not the pipeline: only completeness is judged.
   */
  readonly faults?: boolean;
  /** Another merchant, paid first by every payer, has an endpoint that never answers. */
  readonly isolation?: boolean;
  readonly onProgress?: (message: string) => void;
}

export interface WebhookLatency {
  readonly clients: number;
  readonly paymentsEach: number;
  readonly faults: boolean;
  readonly isolation: boolean;
  /** Payments answered 200. */
  readonly paid: number;
  readonly payingMs: number;
  /** 503s the payers retried with the same key. */
  readonly retried: number;
  /** Payments that went through the clearing account (`status: pending` in `transfer.received`). */
  readonly pending: number;
  /** Milliseconds from each payment's 200 to its `transfer.received` at the receiver. */
  readonly receivedMs: readonly number[];
  /** Milliseconds from each payment's money becoming spendable to its `transfer.completed`. */
  readonly completedMs: readonly number[];
  /** From the first payment until every event had arrived (or the wait gave up). */
  readonly allToldMs: number;
  /** Requests the receiver answered 500 on purpose. */
  readonly failedOnPurpose: number;
  /** Attempts left hanging at the endpoint that never answers. */
  readonly hung: number;
  /** What was missing, doubled or unverified: empty when every payment was told once. */
  readonly problems: readonly string[];
  /**
   * Where the time went, per event at the receiver (ms): from the fact (the 200, or the money
   * spendable) to its delivery task stored by the deriver, from there to the dispatcher's first
   * attempt, and from that attempt to the receiver. From the stack's webhooks table.
   */
  readonly stages: Readonly<Record<'derived' | 'dispatched' | 'received', readonly number[]>>;
}

/** Each event's task creation and first attempt, as the stack's webhooks table holds them. */
async function deliveryTimes(client: DynamoDBDocumentClient, tableName: string) {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  const tasked = new Map<string, number>();
  const attempted = new Map<string, number>();
  for (const item of items) {
    if (item.kind === 'task') tasked.set(String(item.eventId), Date.parse(String(item.createdAt)));
    if (typeof item.attemptKey === 'string' && item.attempt === 1) {
      attempted.set(String(item.eventId), Date.parse(String(item.attemptedAt)));
    }
  }
  return { tasked, attempted };
}

/** Runs the scenario on a stack of its own, stopped (Java included) whatever happens. */
export async function measureWebhookLatency(scenario: WebhookScenario): Promise<WebhookLatency> {
  const { clients, paymentsEach, faults = false, isolation = false } = scenario;
  const progress = scenario.onProgress ?? (() => undefined);
  // The local stack's region and dummy credentials, for this process's own DynamoDB client.
  Object.assign(process.env, LOCAL_AWS_ENV);
  const stateDir = await mkdtemp(join(tmpdir(), 'webhook-bench-'));
  const port = await freePort();
  progress(`webhooks: starting the local stack on port ${port}`);
  const gateway = await startGateway(
    port,
    stateDir,
    [],
    [],
    faults ? { WEBHOOK_RETRY_SCHEDULE: SHORT_SCHEDULE } : {},
  );
  const receiver = await startWebhookReceiver();
  const dead = await startWebhookReceiver();
  dead.hang = true;
  const problems: string[] = [];
  let client: DynamoDBDocumentClient | undefined;
  try {
    const base = `http://127.0.0.1:${port}`;
    const call = async (method: string, path: string, token: string, json?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(json ? { 'content-type': 'application/json', 'idempotency-key': randomUUID() } : {}),
        },
        ...(json ? { body: JSON.stringify(json) } : {}),
      });
      return {
        status: response.status,
        json: (await response.json().catch(() => undefined)) as Record<string, unknown>,
      };
    };
    /** A merchant whose wallet is open, with an endpoint at `hooks`. */
    const merchantAt = async (hooks: typeof receiver) => {
      const address = `merchant-${randomUUID()}`;
      const token = await signLocalToken({
        sub: address,
        scope: 'read:wallet read:webhooks write:webhooks',
        port,
        stateDir,
      });
      await call('GET', '/api/wallet/balance', token);
      const registered = await call('POST', '/api/wallet/webhooks', token, { url: hooks.url });
      if (registered.status !== 201) throw new Error(`registering answered ${registered.status}`);
      hooks.secrets.push(String(registered.json.secret));
      return address;
    };
    const merchant = await merchantAt(receiver);
    const deadMerchant = isolation ? await merchantAt(dead) : undefined;

    const stack = await readRunningStack(port, stateDir);
    if (!stack) throw new Error('the stack is not running');
    client = createDocumentClient({ endpoint: stack.dynamodbEndpoint });
    const recordDeposit = makeRecordDeposit({
      deposits: createDepositStore({ client, tableName: stack.env.WALLETS_TABLE_NAME as string }),
      ids: { next: randomUUID },
    });
    const payers = Array.from({ length: clients }, () => `payer-${randomUUID()}`);
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
    const tokens = await Promise.all(
      payers.map((sub) => signLocalToken({ sub, scope: 'write:wallet', port, stateDir })),
    );

    /** Pays `to` once with `token`, retrying a 503 with the same key, as the API asks clients to. */
    const pay = async (token: string, to: string) => {
      const key = randomUUID();
      for (let attempt = 1; ; attempt++) {
        const response = await fetch(`${base}/api/wallet/send`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body: JSON.stringify({ toAddress: to, amount: 0.01 }),
        });
        const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
        if (response.status === 200) return { transferId: String(json.transferId), retried: attempt - 1 };
        if (response.status !== 503 || attempt >= 10)
          throw new Error(`a payment answered ${response.status}`);
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    };
    if (deadMerchant) await Promise.all(tokens.map((token) => pay(token, deadMerchant)));
    if (deadMerchant) await dead.until(() => dead.hung.length > 0, 30_000);

    // A round first, not measured, into another merchant with its own receiver: DynamoDB Local's
    // JVM compiles its hot code during its first seconds of load, which DynamoDB has no counterpart
    // of (docs/decisions/local-dynamodb-jvm.md). Its events must arrive too.
    progress('webhooks: a round to warm DynamoDB Local, not measured');
    const warm = await startWebhookReceiver();
    try {
      const warmMerchant = await merchantAt(warm);
      await Promise.all(
        tokens.map(async (token) => {
          for (let n = 0; n < paymentsEach; n++) await pay(token, warmMerchant);
        }),
      );
      await warm
        .until(
          (received) => new Set(received.map((event) => event.id)).size >= 2 * clients * paymentsEach,
          120_000,
        )
        .catch((error: Error) => problems.push(`warm-up round: ${error.message}`));
    } finally {
      await warm.close();
    }
    progress(`webhooks: ${clients} payers × ${paymentsEach} payments into one merchant`);
    if (faults) {
      receiver.failShare = 0.3;
      // At most once per event, as in the e2e suite. Drawn for every request, the share can spend
      // an event's whole shortened schedule (10 attempts, up to 3 of them in the outage): 2 runs
      // of 4 lost one event, one of them an event refused once by the outage and then 9 times.
      receiver.failOnce = true;
    }
    const answeredAt = new Map<string, number>();
    let retried = 0;
    const outage = faults
      ? (async () => {
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          await receiver.setDown(true);
          await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
          await receiver.setDown(false);
        })()
      : Promise.resolve();
    const startedAt = Date.now();
    await Promise.all(
      tokens.map(async (token) => {
        for (let n = 0; n < paymentsEach; n++) {
          const paid = await pay(token, merchant);
          answeredAt.set(paid.transferId, Date.now());
          retried += paid.retried;
        }
      }),
    );
    const payingMs = Date.now() - startedAt;
    await outage;
    const paid = answeredAt.size;
    /** The merchant's events of `type` as received first: each id once, a redelivery the same bytes. */
    const distinct = (type: string) => {
      const byId = new Map<string, ReceivedEvent>();
      for (const event of receiver.received) {
        if (event.type !== type || event.data.address !== merchant) continue;
        const seen = byId.get(event.id);
        if (!seen) byId.set(event.id, event);
        else if (seen.text !== event.text)
          problems.push(`${event.id} was delivered twice with different bodies`);
      }
      return [...byId.values()];
    };
    await receiver
      .until(
        () => distinct('transfer.received').length >= paid && distinct('transfer.completed').length >= paid,
        180_000,
      )
      .catch((error: Error) => problems.push(error.message));
    const allToldMs = Date.now() - startedAt;

    const received = distinct('transfer.received');
    const completed = distinct('transfer.completed');
    const ids = (events: ReceivedEvent[]) => events.map((e) => String(e.data.transferId)).sort();
    const paidIds = [...answeredAt.keys()].sort();
    if (JSON.stringify(ids(received)) !== JSON.stringify(paidIds))
      problems.push(`transfer.received: ${received.length} distinct events for ${paid} payments`);
    if (JSON.stringify(ids(completed)) !== JSON.stringify(paidIds))
      problems.push(`transfer.completed: ${completed.length} distinct events for ${paid} payments`);
    if (new Set([...received, ...completed].map((e) => e.id)).size !== received.length + completed.length)
      problems.push('an event id was used for two facts');
    const { tasked, attempted } = await deliveryTimes(client, stack.env.WEBHOOKS_TABLE_NAME as string);
    const factAt = (event: ReceivedEvent) =>
      event.type === 'transfer.received'
        ? (answeredAt.get(String(event.data.transferId)) ?? event.receivedAt)
        : Date.parse(event.timestamp);
    const timed = [...received, ...completed].flatMap((event) => {
      const task = tasked.get(event.id);
      const attempt = attempted.get(event.id);
      return task === undefined || attempt === undefined ? [] : [{ event, task, attempt }];
    });
    const seqs = completed.map((e) => Number(e.data.seq)).sort((a, b) => a - b);
    if (seqs.some((seq, i) => seq !== i + 1)) problems.push('the merchant’s seq values have a gap');
    if (receiver.unverified.length > 0)
      problems.push(`${receiver.unverified.length} deliveries did not verify`);

    return {
      clients,
      paymentsEach,
      faults,
      isolation,
      paid,
      payingMs,
      retried,
      pending: received.filter((e) => e.data.status === 'pending').length,
      receivedMs: received.map(
        (e) => e.receivedAt - (answeredAt.get(String(e.data.transferId)) ?? e.receivedAt),
      ),
      completedMs: completed.map((e) => e.receivedAt - Date.parse(e.timestamp)),
      allToldMs,
      failedOnPurpose: receiver.failed,
      hung: dead.hung.length,
      problems,
      stages: {
        derived: timed.map(({ event, task }) => task - factAt(event)),
        dispatched: timed.map(({ task, attempt }) => attempt - task),
        received: timed.map(({ event, attempt }) => event.receivedAt - attempt),
      },
    };
  } finally {
    client?.destroy();
    await Promise.all([receiver.close(), dead.close()]);
    await stopGateway(gateway);
    await rm(stateDir, { recursive: true, force: true });
  }
}
