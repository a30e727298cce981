import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPostCreditsHandler } from '#functions/post-credits/handler.ts';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { ensureTables, localClient } from '#infra/local/dynamodb-local.ts';
import { DynamoDbProxy } from '#infra/local/dynamodb-proxy.ts';
import { type StreamInvoke, type StreamPoller, startStreamPoller } from '#infra/local/stream-poller.ts';
import type { FailedBatch } from '#infra/local/stream-records.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { createDirectClaimStore } from '#shared/wallet/dynamodb/direct-claim-store.ts';
import { createHotMarkerStore } from '#shared/wallet/dynamodb/hot-marker-store.ts';
import { creditKey, walletKey } from '#shared/wallet/dynamodb/keys.ts';
import { createTransferStore } from '#shared/wallet/dynamodb/transfer-store.ts';
import { makeHotWalletRouter } from '#shared/wallet/hot-wallet/router.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { makeSendMoney } from '#shared/wallet/send/send-money.ts';
import { entryItemsByKey } from '../support/credits.ts';
import { uniqueSub } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { sendFunctionMs } from '../support/ledger.ts';

// The local stand-in for the event source mapping (infra/local/stream-poller.ts) against DynamoDB
// Local's real stream, with the real poster (functions/post-credits) and credits written by the
// real send path to hot wallets. Each test has a table of its own, hence a stream of its own.

const endpoint = inject('env').DYNAMODB_ENDPOINT as string;
const settings = {
  currency: { code: 'USD', decimals: 2 },
  maxTransferMinor: 1_000_000_00,
  idempotencyTtlSeconds: 86_400,
};
/** Quick pollers: the deployed window and retries, shortened; the semantics are the same. */
const FAST = { maxBatchingWindowSeconds: 0.3, pollIntervalMs: 100 } as const;

let stateDir: string;
const pollers: StreamPoller[] = [];
const clients: DynamoDBDocumentClient[] = [];

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'credit-poster-stream-'));
});

afterAll(async () => {
  await Promise.all(pollers.map((poller) => poller.stop()));
  for (const client of clients) client.destroy();
  await rm(stateDir, { recursive: true, force: true });
});

const newClient = () => {
  const client = createDocumentClient({ endpoint });
  clients.push(client);
  return client;
};

/** A wallets table (and so a stream) of the test's own, and what writes to it. */
async function ledger() {
  const env = await ensureTables(endpoint, `poster-${randomUUID().slice(0, 8)}`);
  const tableName = env[tables.wallets.envVar] as string;
  const client = newClient();
  const access = { client, tableName };
  // The test's own reads and writes: the SDK's default timeouts and retries, as a loaded machine
  // can make DynamoDB Local answer later than the functions' clients wait.
  const reader = DynamoDBDocumentClient.from(localClient(endpoint));
  clients.push(reader);
  // Opens a wallet holding `amountMinor`, without entries: the test's setup, written directly, as
  // the many deposits of a real funding all wait on the one issuance account.
  const fund = async (address: string, amountMinor: number) => {
    await reader.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: walletKey(address), kind: 'wallet', balance: amountMinor, seq: 0 },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  };
  const sendMoney = makeSendMoney({
    transfers: createTransferStore(access),
    router: makeHotWalletRouter({
      claims: createDirectClaimStore(access),
      marker: createHotMarkerStore(access),
      clock: systemClock,
    }),
    clock: systemClock,
    ids: { next: randomUUID },
    settings,
  });
  const { markHot } = createHotMarkerStore(access);
  /** A new poster, as another container would be: a client of its own. */
  const poster = () => createPostCreditsHandler({ client: newClient(), tableName });
  const poll = async (invoke: StreamInvoke, overrides: Record<string, number> = {}) => {
    const failureFile = join(stateDir, `${tableName}-${randomUUID()}.jsonl`);
    const poller = await startStreamPoller({
      endpoint,
      tableName,
      invoke,
      failureFile,
      settings: { ...FAST, ...overrides },
      log: () => undefined,
    });
    pollers.push(poller);
    return { poller, failureFile };
  };
  return { tableName, client: reader, fund, sendMoney, markHot, poster, poll };
}

type Ledger = Awaited<ReturnType<typeof ledger>>;

/** Opens each merchant with 0.01 and each payer with 1,000.00. */
async function fundAll(book: Ledger, merchants: string[], payers: string[]) {
  await Promise.all([...merchants.map((m) => book.fund(m, 1)), ...payers.map((p) => book.fund(p, 100_000))]);
}

/** One payment through the real send path, with the send function's time to answer in. */
async function pay(book: Ledger, sub: string, toAddress: string, amountMinor: number) {
  const result = await book.sendMoney({
    sub,
    toAddress,
    amountMinor,
    idempotencyKey: randomUUID(),
    answerBy: Date.now() + sendFunctionMs(),
  });
  // Through the clearing account: the recipient is hot.
  expect(result.transfer.via).toBe('clearing');
  return result;
}

/** Pays each merchant, hot, from each payer, `rounds` times; returns what each merchant is owed. */
async function payHotMerchants(book: Ledger, merchants: string[], payers: string[], rounds: number) {
  for (const merchant of merchants) await book.markHot(merchant, Date.now() + 60_000);
  const owed = new Map<string, { amount: number; transfers: string[] }>(
    merchants.map((m) => [m, { amount: 0, transfers: [] }]),
  );
  // The payers at once, each paying one merchant after another (a payer's own payments would
  // only wait for each other).
  await Promise.all(
    payers.map(async (payer, p) => {
      for (let round = 0; round < rounds; round++) {
        for (const [m, merchant] of merchants.entries()) {
          const amountMinor = 100 + round * 10 + p + m;
          const result = await pay(book, payer, merchant, amountMinor);
          const due = owed.get(merchant);
          if (!due) throw new Error('unknown merchant');
          due.amount += amountMinor;
          due.transfers.push(result.transfer.transferId);
        }
      }
    }),
  );
  return owed;
}

interface Entry {
  seq: number;
  transferId: string;
  amountMinor: number;
  balanceAfter: number;
}

/** Every entry of `address`'s wallet, by seq. */
async function entriesOf(client: DynamoDBDocumentClient, tableName: string, address: string) {
  const byKey = await entryItemsByKey(client, tableName, address);
  return ([...byKey.values()].flat() as unknown as Entry[]).sort((a, b) => a.seq - b.seq);
}

async function walletOf(client: DynamoDBDocumentClient, tableName: string, address: string) {
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: { pk: walletKey(address) }, ConsistentRead: true }),
  );
  return Item as { balance: number; seq: number } | undefined;
}

/**
 * Every credit to `merchant` posted exactly once: the balance is the opening balance plus what it
 * is owed, its entries are numbered 1..seq without a gap, each payment has one entry and its
 * credit names that entry, and each running balance is exact.
 */
async function expectPostedOnce(
  book: Ledger,
  merchant: string,
  opening: number,
  due: { amount: number; transfers: string[] },
) {
  const wallet = await walletOf(book.client, book.tableName, merchant);
  expect(wallet?.balance).toBe(opening + due.amount);
  expect(wallet?.seq).toBe(due.transfers.length);
  const entries = await entriesOf(book.client, book.tableName, merchant);
  expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
  expect(entries).toHaveLength(due.transfers.length);
  let balance = opening;
  for (const entry of entries) {
    balance += entry.amountMinor;
    expect(entry.balanceAfter).toBe(balance);
  }
  const byTransfer = new Map<string, number>();
  for (const entry of entries) byTransfer.set(entry.transferId, (byTransfer.get(entry.transferId) ?? 0) + 1);
  expect([...byTransfer.keys()].sort()).toEqual([...due.transfers].sort());
  expect([...byTransfer.values()].every((count) => count === 1)).toBe(true);
  for (const transferId of due.transfers) {
    const { Item: credit } = await book.client.send(
      new GetCommand({ TableName: book.tableName, Key: { pk: creditKey(transferId) }, ConsistentRead: true }),
    );
    expect(credit?.pendingFor, transferId).toBeUndefined();
    expect(entries.find((e) => e.seq === credit?.postedSeq)?.transferId).toBe(transferId);
  }
}

const postedAll =
  (book: Ledger, merchants: string[], owed: Map<string, { transfers: string[] }>) => async () => {
    for (const merchant of merchants) {
      // Entries, not the wallet's seq: a posting of whole batches moves it before they are written.
      const entries = await entriesOf(book.client, book.tableName, merchant);
      if (entries.length < (owed.get(merchant)?.transfers.length ?? 0)) return false;
    }
    return true;
  };

const failuresOf = (answer: unknown) =>
  (answer as DynamoDBBatchResponse | undefined)?.batchItemFailures ?? [];

/**
 * A poller handing every batch to two posters at the same time, as two containers would get the
 * same records; returns how many batches it has delivered so far.
 */
async function pollTwice(book: Ledger): Promise<() => number> {
  const first = book.poster();
  const second = book.poster();
  let delivered = 0;
  await book.poll(async (event) => {
    delivered++;
    const answers = await Promise.all([first(event), second(event)]);
    return { batchItemFailures: answers.flatMap(failuresOf) };
  });
  return () => delivered;
}

describe('the local stream poller delivering credits to the poster', () => {
  // The dying poster's first batch either races the others' postings or, held back, reaches it
  // once they have posted every credit. Either way the test waits for the death itself: the
  // others may post everything before the dying poster has answered once.
  for (const { order, held } of [
    { order: 'while the others post it', held: false },
    { order: 'after the others have posted it', held: true },
  ]) {
    it(`posts every credit exactly once when each batch is delivered twice, by two pollers at once, and the poster dies mid-batch ${order}`, {
      timeout: 120_000,
    }, async () => {
      const book = await ledger();
      const merchants = [uniqueSub('shop'), uniqueSub('shop'), uniqueSub('shop')];
      const payers = Array.from({ length: 4 }, () => uniqueSub('payer'));
      await fundAll(book, merchants, payers);
      const deliveredTwice = await pollTwice(book);

      // Another poller on the same stream, whose poster dies mid-batch the first times: it posts
      // the first wallet of the batch, then crashes before answering.
      const dying = book.poster();
      let deaths = 0;
      let release = () => {};
      const othersPosted = new Promise<void>((resolve) => {
        release = resolve;
      });
      await book.poll(async (event: DynamoDBStreamEvent) => {
        if (held) await othersPosted;
        if (deaths < 3) {
          const firstWallet = event.Records[0]?.dynamodb?.NewImage?.toAccount?.S;
          await dying({
            Records: event.Records.filter((r) => r.dynamodb?.NewImage?.toAccount?.S === firstWallet),
          });
          deaths++;
          throw new Error('the poster died mid-batch');
        }
        return dying(event);
      });

      // Payments keep arriving while the pollers read, so that batches form over time.
      const owed = await payHotMerchants(book, merchants, payers, 2);
      await eventually(postedAll(book, merchants, owed), 60_000, 'every credit posted');
      release();
      // Deliveries that would post twice if the poster let them, and a death mid-batch.
      const tried = async () =>
        deliveredTwice() > 0 && deaths > 0 && (await postedAll(book, merchants, owed)());
      await eventually(tried, 60_000, 'every credit posted, a batch delivered twice, a poster dead');
      // Let the pollers read any retries and duplicates still in flight, then check nothing moved again.
      await sleep(1_500);
      for (const merchant of merchants) {
        await expectPostedOnce(book, merchant, 1, owed.get(merchant) ?? { amount: 0, transfers: [] });
      }
    });
  }

  it('posts every credit exactly once on two levels when each batch is delivered twice, by two pollers at once, and the poster dies after posting', {
    timeout: 120_000,
  }, async () => {
    const book = await ledger();
    const merchants = [uniqueSub('shop'), uniqueSub('shop')];
    const payers = Array.from({ length: 6 }, () => uniqueSub('payer'));
    await fundAll(book, merchants, payers);
    // Written before the pollers start: 60 credits a wallet in one delivery, more than one
    // transaction of them holds, so each is batched, posted and completed.
    const owed = await payHotMerchants(book, merchants, payers, 10);
    const deliveredTwice = await pollTwice(book);
    const dying = book.poster();
    let deaths = 0;
    await book.poll(async (event: DynamoDBStreamEvent) => {
      const answer = await dying(event);
      if (deaths++ < 2) throw new Error('the poster died before answering');
      return answer;
    });
    const everyPoller = async () =>
      deliveredTwice() > 0 && deaths > 0 && (await postedAll(book, merchants, owed)());
    await eventually(everyPoller, 60_000, 'every credit posted, a batch delivered twice, a poster dead');
    await sleep(1_500);
    for (const merchant of merchants) {
      await expectPostedOnce(book, merchant, 1, owed.get(merchant) ?? { amount: 0, transfers: [] });
    }
  });

  it('posts every credit exactly once when the poster process is killed in the middle of a batch', {
    timeout: 180_000,
  }, async () => {
    const book = await ledger();
    const merchant = uniqueSub('shop');
    const payers = Array.from({ length: 5 }, () => uniqueSub('payer'));
    await fundAll(book, [merchant], payers);
    // Written before the poster starts, so that they come in one call, posted on two levels.
    const owed = await payHotMerchants(book, [merchant], payers, 24);
    const due = owed.get(merchant) ?? { amount: 0, transfers: [] };
    // Its completions (the one transaction that names `completedBy`: credit-store.ts `complete`)
    // never reach DynamoDB: once the proxy has one, a posting has committed (the poster completes
    // only what it posted) and none of its entries can be written, whenever the process dies. A
    // delay would not do: the proxy forwards a delayed request after its client died, and the
    // completions, sent together right after the posting, would land regardless of the kill.
    const proxy = await DynamoDbProxy.start(endpoint);
    const isCompletion = (r: { body: string }) => r.body.includes('completedBy');
    proxy.inject({ kind: 'stall' }, { operation: 'TransactWriteItems', when: isCompletion });
    const child = spawn(
      process.execPath,
      [join(PROJECT_ROOT, 'test', 'support', 'credit-poster-process.ts')],
      {
        cwd: PROJECT_ROOT,
        env: {
          ...process.env,
          POSTER_TABLE: book.tableName,
          POSTER_ENDPOINT: proxy.endpoint,
          STREAM_ENDPOINT: endpoint,
          POSTER_FAILURE_FILE: join(stateDir, `${book.tableName}-killed.jsonl`),
        },
        stdio: 'ignore',
      },
    );
    const exited = once(child, 'exit');
    const seq = async () => (await walletOf(book.client, book.tableName, merchant))?.seq ?? 0;
    try {
      await eventually(
        () => proxy.requests('TransactWriteItems', isCompletion).length > 0,
        90_000,
        'a completion sent',
      );
      child.kill('SIGKILL');
      await exited;
    } finally {
      child.kill('SIGKILL');
      await proxy.close();
    }
    // Killed between a posting and its completion: the wallet holds money (seq) of credits whose
    // entries are not written.
    const posted = await seq();
    expect(posted).toBeGreaterThan(0);
    expect((await entriesOf(book.client, book.tableName, merchant)).length).toBeLessThan(posted);
    // A new poster on the stream, as Lambda would start after the crash: it reads the batch again.
    await book.poll(book.poster());
    await eventually(postedAll(book, [merchant], owed), 60_000, 'every credit posted');
    await sleep(1_000);
    await expectPostedOnce(book, merchant, 1, due);
  });

  it('sends a malformed credit to the failure destination after the bounded retries, and posts the others', {
    timeout: 60_000,
  }, async () => {
    const book = await ledger();
    const merchant = uniqueSub('shop');
    const payers = Array.from({ length: 4 }, () => uniqueSub('payer'));
    await fundAll(book, [merchant], payers);
    const poison = `CREDIT#${randomUUID()}`;
    // A credit that names no recipient: the poster can never post it.
    await book.client.send(
      new PutCommand({ TableName: book.tableName, Item: { pk: poison, kind: 'credit', amountMinor: 5 } }),
    );
    const poster = book.poster();
    const seen: DynamoDBStreamEvent['Records'] = [];
    const maxRetryAttempts = 3;
    const { poller, failureFile } = await book.poll(
      async (event) => {
        seen.push(...event.Records);
        return poster(event);
      },
      { maxRetryAttempts },
    );
    const before = await payHotMerchants(book, [merchant], payers, 2);
    await eventually(
      async () => (await readFile(failureFile, 'utf8').catch(() => '')).length > 0,
      30_000,
      'the failure destination',
    );
    const lines = (await readFile(failureFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as FailedBatch);
    expect(lines).toHaveLength(1);
    const [failed] = lines;
    expect(failed?.requestContext.condition).toBe('RetryAttemptsExhausted');
    expect(failed?.requestContext.approximateInvokeCount).toBe(maxRetryAttempts + 1);
    expect(failed?.keys[0]).toEqual({ pk: { S: poison } });
    expect(failed?.DDBStreamBatchInfo.streamArn).toBe(poller.streamArn);
    // The shard goes on: credits written after the poison gave up are posted too.
    const after = await payHotMerchants(book, [merchant], payers, 1);
    const due = before.get(merchant) ?? { amount: 0, transfers: [] };
    const late = after.get(merchant) ?? { amount: 0, transfers: [] };
    const owed = new Map([
      [merchant, { amount: due.amount + late.amount, transfers: [...due.transfers, ...late.transfers] }],
    ]);
    await eventually(postedAll(book, [merchant], owed), 30_000, 'the other credits posted');
    await expectPostedOnce(book, merchant, 1, owed.get(merchant) ?? { amount: 0, transfers: [] });
    // The filter let only inserted credits through: no wallet, entry or transfer record reached it.
    expect(seen.length).toBeGreaterThan(0);
    for (const record of seen) {
      expect(record.eventName).toBe('INSERT');
      expect(record.dynamodb?.NewImage?.kind?.S).toBe('credit');
    }
    expect(poller.stats().recordsFiltered).toBeGreaterThan(0);
  });

  it('splits a batch whose invocation fails until the failing credit stands alone, and posts the rest', {
    timeout: 60_000,
  }, async () => {
    const book = await ledger();
    const merchant = uniqueSub('shop');
    const payers = Array.from({ length: 6 }, () => uniqueSub('payer'));
    await fundAll(book, [merchant], payers);
    const poster = book.poster();
    let poisoned: string | undefined;
    const sizes: number[] = [];
    // Collect the whole burst into one batch, then fail every invocation that holds the poison.
    const { failureFile } = await book.poll(
      async (event) => {
        sizes.push(event.Records.length);
        if (event.Records.some((r) => r.dynamodb?.NewImage?.transferId?.S === poisoned)) {
          throw new Error('this credit always fails');
        }
        return poster(event);
      },
      { maxRetryAttempts: 2, maxBatchingWindowSeconds: 2 },
    );
    await book.markHot(merchant, Date.now() + 60_000);
    // The poison is decided before the payments' records can be read: the first payment.
    const firstPayment = await book.sendMoney({
      sub: payers[0] as string,
      toAddress: merchant,
      amountMinor: 7,
      answerBy: Date.now() + sendFunctionMs(),
    });
    poisoned = firstPayment.transfer.transferId;
    const rest = await payHotMerchants(book, [merchant], payers, 2);
    const good = rest.get(merchant) ?? { amount: 0, transfers: [] };
    await eventually(
      async () => (await readFile(failureFile, 'utf8').catch(() => '')).length > 0,
      30_000,
      'the failure destination',
    );
    const owed = new Map([[merchant, good]]);
    await eventually(postedAll(book, [merchant], owed), 30_000, 'the other credits posted');
    const [failed] = (await readFile(failureFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as FailedBatch);
    expect(failed?.DDBStreamBatchInfo.batchSize).toBe(1);
    expect(failed?.keys).toEqual([{ pk: { S: creditKey(poisoned) } }]);
    expect(failed?.responseContext.functionError).toMatch(/always fails/);
    // Bisected: a batch of several, then halves, down to the poison alone.
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    expect(sizes).toContain(1);
    await expectPostedOnce(book, merchant, 1, good);
  });

  it('takes every record written once it has started from LATEST, however long its shard iterators took', {
    timeout: 60_000,
  }, async () => {
    const book = await ledger();
    const reads = await DynamoDbProxy.start(endpoint);
    reads.inject({ kind: 'delay', ms: 1_000 }, { operation: 'GetShardIterator', times: 1 });
    const delivered = new Set<string>();
    const poller = await startStreamPoller({
      endpoint: reads.endpoint,
      tableName: book.tableName,
      invoke: async (event) => {
        for (const record of event.Records) delivered.add(String(record.dynamodb?.Keys?.pk?.S));
        return { batchItemFailures: [] };
      },
      failureFile: join(stateDir, `${book.tableName}-latest.jsonl`),
      settings: {
        startingPosition: 'LATEST' as 'TRIM_HORIZON',
        maxBatchingWindowSeconds: 0,
        pollIntervalMs: 100,
      },
      log: () => undefined,
    });
    pollers.push(poller);
    try {
      const pk = creditKey(randomUUID());
      await book.client.send(new PutCommand({ TableName: book.tableName, Item: { pk, kind: 'credit' } }));
      // As first built, started before its iterator existed: a record written then was before LATEST.
      await eventually(() => delivered.has(pk), 10_000, 'the record written just after the start');
    } finally {
      await poller.stop();
      await reads.close();
    }
  });

  it('reads a shard no more often than its poll interval while records keep coming', {
    timeout: 60_000,
  }, async () => {
    const book = await ledger();
    // The poller reads the stream through a proxy that keeps every request it forwards.
    const reads = await DynamoDbProxy.start(endpoint);
    let delivered = 0;
    const poller = await startStreamPoller({
      endpoint: reads.endpoint,
      tableName: book.tableName,
      invoke: async (event) => {
        delivered += event.Records.length;
        return { batchItemFailures: [] };
      },
      failureFile: join(stateDir, `${book.tableName}-cadence.jsonl`),
      settings: { maxBatchingWindowSeconds: 0, pollIntervalMs: 250 },
      log: () => undefined,
    });
    pollers.push(poller);
    try {
      // Credits written one after another for 2 s, so that every read finds some.
      const started = Date.now();
      let written = 0;
      while (Date.now() - started < 2_000) {
        await book.client.send(
          new PutCommand({
            TableName: book.tableName,
            Item: { pk: creditKey(randomUUID()), kind: 'credit' },
          }),
        );
        written++;
      }
      await eventually(async () => delivered >= written, 10_000, 'every record delivered');
      const seconds = (Date.now() - started) / 1000;
      // One shard (a new table's stream), read about four times a second: not once per delivery.
      expect(reads.requests('GetRecords').length).toBeLessThanOrEqual(Math.ceil(seconds * 4) + 2);
    } finally {
      await poller.stop();
      await reads.close();
    }
  });
});
