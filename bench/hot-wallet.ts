/**
 * A wallet many pay at once, through `npm start` (its own process) with DynamoDB Local behind the
 * proxy in its DynamoDB-like conflict mode: per round, 100 clients each make 5 payments of 1.00
 * into ONE fresh merchant wallet, and the same clients make 5 payments each spread over 100 fresh
 * recipients, the two runs in alternating order. Judged per round: the hot run's throughput and its
 * payers' p99 over the spread run's, every answer 200, how often the proxy saw the merchant's item
 * touched per payment, and how long after its 200 a payment reached the merchant's available
 * balance (the credit's `postedAt`, or its batch's: a posting of batches moves the money a
 * transaction before their entries are written).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { TouchReportEntry } from '#infra/local/dynamodb-conflicts.ts';
import { freePort, localClient } from '#infra/local/dynamodb-local.ts';
import { TOUCHES_PATH } from '#infra/local/dynamodb-proxy.ts';
import { signLocalToken } from '#infra/local/issuer.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { walletKey } from '#shared/wallet/dynamodb/keys.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { KeepAliveConnection } from './keep-alive-client.ts';
import { startGateway, stopGateway } from './processes.ts';
import { type Estimate, estimate, percentile, type Undecided } from './stats.ts';

export interface HotWallet {
  /** Per round, the hot run's payments per second over the spread run's. */
  readonly throughputRatio: Estimate;
  /** Per round, the hot run's payers' p99 over the spread run's. */
  readonly p99Ratio: Estimate;
  /** Answers other than 200, over every run. */
  readonly failed: number;
  readonly payments: number;
  /** Touches of the merchant's item (written, or named in a failed transaction) per payment, the worst round. */
  readonly touchesPerPayment: number;
  /** The worst round's touches per payment that were writes (postings); the rest named it in a failed transaction. */
  readonly writesPerPayment: number;
  /** p99 over every hot payment of the time from its 200 to its credit's posting (0 when credited directly). */
  readonly visibleP99Ms: number;
  readonly hotPaymentsPerSecond: number;
  readonly spreadPaymentsPerSecond: number;
}

/** The issue's scenario: so many clients, each making so many payments, per round and side. */
export const HOT_SCENARIO = { clients: 100, paymentsEach: 5 } as const;

export interface HotWalletOptions {
  readonly rounds: number;
  readonly extraSets: number;
  /** Whether the throughput ratio's and the p99 ratio's intervals still straddle their limits. */
  readonly undecided: { readonly throughput: Undecided; readonly p99: Undecided };
  readonly onProgress?: (message: string) => void;
}

interface Run {
  readonly latenciesMs: number[];
  readonly seconds: number;
  readonly failed: number;
  /** When each payment's 200 arrived, by transfer id. */
  readonly answeredAt: Map<string, number>;
}

export async function measureHotWallet(options: HotWalletOptions): Promise<HotWallet> {
  const progress = options.onProgress ?? (() => undefined);
  const stateDir = await mkdtemp(join(tmpdir(), 'wallet-catalog-hot-'));
  const statuses = new Map<number, number>();
  let lastProblem = '';
  const port = await freePort();
  progress(`hot wallet: starting the local stack (conflict mode) on port ${port}`);
  const gateway = await startGateway(port, stateDir, []);
  const connections: KeepAliveConnection[] = [];
  try {
    const stack = await readRunningStack(port, stateDir);
    if (!stack) throw new Error('The local stack wrote no record of itself');
    if (!stack.conflicts) throw new Error('The local stack runs without its conflict mode');
    Object.assign(process.env, stack.env);
    const { createDocumentClient } = await import('#shared/dynamodb/client.ts');
    const { createDepositStore } = await import('#shared/wallet/dynamodb/deposit-store.ts');
    const { makeRecordDeposit } = await import('#shared/wallet/deposit/record-deposit.ts');
    const { createWalletOpening } = await import('#shared/wallet/dynamodb/wallet-opening.ts');
    const client = createDocumentClient({ endpoint: stack.dynamodbEndpoint });
    const tableName = stack.env[tables.wallets.envVar] as string;
    const recordDeposit = makeRecordDeposit({
      deposits: createDepositStore({ client, tableName }),
      ids: { next: randomUUID },
    });
    const openWallet = createWalletOpening({ client, tableName });
    // The harness's own reads of the whole table, straight to DynamoDB Local with the SDK's
    // defaults: past the conflict proxy (they are no payment's contention) and without the
    // functions' 2 s request timeout, which a consistent Scan of a table grown by the rounds
    // exceeded (it ended a run in its fourth round).
    const scanner = DynamoDBDocumentClient.from(localClient(stack.dynamodbLocalEndpoint));
    const now = () => new Date().toISOString();

    const payers: { sub: string; token: string }[] = [];
    for (let i = 0; i < HOT_SCENARIO.clients; i++) {
      const sub = `hot-payer-${i}-${randomUUID()}`;
      const deposit = {
        depositId: randomUUID(),
        address: sub,
        amountMinor: 1e11,
        currency: 'USD',
        createdAt: now(),
      };
      if ((await recordDeposit(deposit)).kind !== 'recorded') throw new Error('Funding a payer failed');
      payers.push({
        sub,
        token: await signLocalToken({ sub, scope: 'write:wallet read:wallet', port, stateDir }),
      });
      connections.push(new KeepAliveConnection('127.0.0.1', port));
    }

    /** Every client pays `recipientOf(client)` `paymentsEach` times, one after the other. */
    const pay = async (recipientOf: (client: number) => string): Promise<Run> => {
      const latenciesMs: number[] = [];
      const answeredAt = new Map<string, number>();
      let failed = 0;
      const started = performance.now();
      await Promise.all(
        payers.map(async (payer, i) => {
          const body = JSON.stringify({ toAddress: recipientOf(i), amount: 1 });
          for (let n = 0; n < HOT_SCENARIO.paymentsEach; n++) {
            const sent = performance.now();
            const response = await (connections[i] as KeepAliveConnection).request(
              'POST',
              '/api/wallet/send',
              {
                authorization: `Bearer ${payer.token}`,
                'content-type': 'application/json',
                'idempotency-key': randomUUID(),
              },
              body,
            );
            latenciesMs.push(performance.now() - sent);
            if (response.status === 200)
              answeredAt.set((JSON.parse(response.body) as { transferId: string }).transferId, Date.now());
            else {
              failed++;
              statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
              lastProblem = response.body.slice(0, 300);
            }
          }
        }),
      );
      return { latenciesMs, answeredAt, failed, seconds: (performance.now() - started) / 1000 };
    };

    /** The proxy's count of writes of the item `pk`, and of failed writes naming it. */
    const touchesOf = async (pk: string): Promise<{ writes: number; failed: number }> => {
      const response = await fetch(new URL(TOUCHES_PATH, stack.dynamodbEndpoint));
      const report = (await response.json()) as TouchReportEntry[];
      const entries = report.filter((e) => e.table === tableName && e.key.pk === pk);
      return {
        writes: entries.reduce((sum, e) => sum + e.writes, 0),
        failed: entries.reduce((sum, e) => sum + e.failed, 0),
      };
    };

    /**
     * Waits until every credit to `merchant` is posted, then the delays from each 200 to its
     * money's arrival in the available balance: its posting, or its batch's (whose entries follow).
     */
    const postingDelays = async (merchant: string, run: Run): Promise<number[]> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const items: Record<string, unknown>[] = [];
        const pages = paginateScan(
          { client: scanner },
          {
            TableName: tableName,
            ConsistentRead: true,
            FilterExpression: 'kind IN (:credit, :batch) AND toAccount = :to',
            ExpressionAttributeValues: {
              ':credit': 'credit',
              ':batch': 'batch',
              ':to': walletAccount(merchant),
            },
          },
        );
        for await (const page of pages) items.push(...(page.Items ?? []));
        const credits = items.filter((item) => item.kind === 'credit');
        const batchPostedAt = new Map(
          items.filter((item) => item.kind === 'batch').map((b) => [b.batchId, b.postedAt]),
        );
        if (credits.every((c) => c.postedAt !== undefined) || Date.now() > deadline) {
          // A payment answered other than 200 is counted as failed, whatever became of its credit.
          const answered = credits.filter((c) => run.answeredAt.has(c.transferId as string));
          const delays = answered.map((c) => {
            const available =
              (c.batchId === undefined ? undefined : batchPostedAt.get(c.batchId)) ?? c.postedAt;
            return available === undefined
              ? Number.POSITIVE_INFINITY
              : Math.max(
                  0,
                  Date.parse(available as string) - (run.answeredAt.get(c.transferId as string) ?? 0),
                );
          });
          // Payments credited directly were available at their 200.
          return [...delays, ...Array(Math.max(0, run.answeredAt.size - delays.length)).fill(0)];
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };

    const throughputRatios: number[] = [];
    const p99Ratios: number[] = [];
    const delays: number[] = [];
    let failed = 0;
    let payments = 0;
    let touchesPerPayment = 0;
    let writesPerPayment = 0;
    let hotRate = 0;
    let spreadRate = 0;
    const round = async (n: number) => {
      const merchant = `hot-merchant-${randomUUID()}`;
      const recipients = payers.map((_, i) => `hot-recipient-${n}-${i}-${randomUUID()}`);
      await Promise.all([merchant, ...recipients].map((address) => openWallet(address, now())));
      const touchesBefore = await touchesOf(walletKey(merchant));
      const hotFirst = n % 2 === 0;
      const first = await pay((i) => (hotFirst ? merchant : (recipients[i] as string)));
      const second = await pay((i) => (hotFirst ? (recipients[i] as string) : merchant));
      const [hot, spread] = hotFirst ? [first, second] : [second, first];
      const count = hot.latenciesMs.length;
      throughputRatios.push(count / hot.seconds / (spread.latenciesMs.length / spread.seconds));
      p99Ratios.push(percentile(hot.latenciesMs, 99) / percentile(spread.latenciesMs, 99));
      failed += hot.failed + spread.failed;
      payments += count + spread.latenciesMs.length;
      const roundDelays = await postingDelays(merchant, hot);
      delays.push(...roundDelays);
      const touchesAfter = await touchesOf(walletKey(merchant));
      const roundWrites = (touchesAfter.writes - touchesBefore.writes) / count;
      const roundTouches = roundWrites + (touchesAfter.failed - touchesBefore.failed) / count;
      if (roundTouches > touchesPerPayment)
        [touchesPerPayment, writesPerPayment] = [roundTouches, roundWrites];
      hotRate += count / hot.seconds;
      spreadRate += spread.latenciesMs.length / spread.seconds;
      progress(
        `hot wallet round ${n + 1}: ${hot.failed} + ${spread.failed} not 200 (${[...statuses].map(([k, v]) => `${k}×${v}`).join(', ')}${lastProblem ? `: ${lastProblem}` : ''}), ${(count / hot.seconds).toFixed(0)} vs ${(spread.latenciesMs.length / spread.seconds).toFixed(0)} payments/s, p99 ${percentile(hot.latenciesMs, 99).toFixed(0)} vs ${percentile(spread.latenciesMs, 99).toFixed(0)} ms, ${roundTouches.toFixed(2)} touches/payment (${roundWrites.toFixed(2)} written), available after p99 ${percentile(roundDelays, 99).toFixed(0)} ms`,
      );
    };
    // One round unmeasured first, as the end-to-end stage warms up: the JIT compilers of the
    // gateway and of DynamoDB Local's JVM, whose cold first round timed payments out.
    const warmUp = `hot-merchant-${randomUUID()}`;
    const warmRecipients = payers.map(() => `hot-recipient-warm-up-${randomUUID()}`);
    await Promise.all([warmUp, ...warmRecipients].map((address) => openWallet(address, now())));
    await pay(() => warmUp);
    await pay((i) => warmRecipients[i] as string);
    statuses.clear();
    lastProblem = '';
    let rounds = 0;
    for (; rounds < options.rounds; rounds++) await round(rounds);
    for (
      let set = 0;
      set < options.extraSets &&
      (options.undecided.throughput('hot-wallet', throughputRatios) ||
        options.undecided.p99('hot-wallet', p99Ratios));
      set++
    ) {
      for (let i = 0; i < options.rounds; i++) await round(rounds++);
    }
    client.destroy();
    scanner.destroy();
    return {
      throughputRatio: estimate(throughputRatios),
      p99Ratio: estimate(p99Ratios),
      failed,
      payments,
      touchesPerPayment,
      writesPerPayment,
      visibleP99Ms: percentile(delays, 99),
      hotPaymentsPerSecond: hotRate / rounds,
      spreadPaymentsPerSecond: spreadRate / rounds,
    };
  } finally {
    for (const connection of connections) connection.close();
    await stopGateway(gateway);
    await rm(stateDir, { recursive: true, force: true });
  }
}
