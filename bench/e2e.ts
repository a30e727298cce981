/**
 * End to end: every route through the local gateway (its own process, with DynamoDB Local behind
 * it) at a fixed concurrency, next to the same DynamoDB work done directly with the SDK: the floor
 * that no implementation of the route can beat.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { freePort } from '#infra/local/dynamodb-local.ts';
import { readRunningStack } from '#infra/local/gateway.ts';
import { signLocalToken } from '#infra/local/issuer.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { KeepAliveConnection } from './keep-alive-client.ts';
import { percentile } from './stats.ts';
import { ALL_SCOPES, DYNAMODB_CALLS, fullPet, nextBenchPetId, routeRequest } from './workload.ts';

export interface Latency {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Completed requests per second over the wall time of the batches. */
  readonly throughput: number;
}

export interface RouteEndToEnd {
  /** The function folder of the route. */
  readonly name: string;
  readonly gateway: Latency;
  /** The route's DynamoDB calls made directly; absent for a route that makes none. */
  readonly floor?: Latency;
}

export interface EndToEndOptions {
  readonly concurrency: number;
  /** Measured requests per route and side (gateway, floor), split over the rounds. */
  readonly requests: number;
  readonly rounds: number;
  /** Warm-up requests per route and side, before any is measured. */
  readonly warmUpRequests: number;
  /** Upper bound on one batch, in case the machine is far slower than expected. */
  readonly batchTimeoutMs: number;
  readonly onProgress?: (message: string) => void;
  /** Extra Node.js options of the gateway process, e.g. `--cpu-prof`. */
  readonly gatewayNodeOptions?: readonly string[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * One caller per concurrent worker: its own token, funded wallet and pet, so workers never
 * contend, and its own kept-alive connection to the gateway.
 */
interface Caller {
  readonly sub: string;
  readonly token: string;
  readonly petId: number;
  readonly connection: KeepAliveConnection;
}

/**
 * Starts `node infra/local/start.ts` on a free port with a private state directory, measures every
 * route, and stops the stack (Java included) whatever happens.
 */
export async function measureEndToEnd(
  functionDirs: readonly string[],
  options: EndToEndOptions,
): Promise<RouteEndToEnd[]> {
  const progress = options.onProgress ?? (() => undefined);
  const stateDir = await mkdtemp(join(tmpdir(), 'wallet-catalog-bench-'));
  const port = await freePort();
  progress(`starting the local stack on port ${port}`);
  const gateway = await startGateway(port, stateDir, options.gatewayNodeOptions ?? []);
  const callers: Caller[] = [];
  try {
    const stack = await readRunningStack(port, stateDir);
    if (!stack) throw new Error('The local stack wrote no record of itself');
    // The repository and client modules read their environment when loaded, as functions do.
    Object.assign(process.env, stack.env);
    const { createDocumentClient } = await import('#shared/dynamodb/client.ts');
    const { createWalletRepository } = await import('#shared/wallet/wallet-repository.ts');
    const client = createDocumentClient();
    const petsTable = stack.env[tables.pets.envVar] as string;
    const walletsTable = stack.env[tables.wallets.envVar] as string;
    const { openWallet, recordDeposit } = createWalletRepository({ client, tableName: walletsTable });

    for (let worker = 0; worker < options.concurrency; worker++) {
      const sub = `bench-${worker}-${randomUUID()}`;
      const token = await signLocalToken({ sub, scope: ALL_SCOPES, port, stateDir });
      await recordDeposit({
        depositId: randomUUID(),
        address: sub,
        amountMinor: 100_000_000_000,
        currency: stack.env.CURRENCY ?? 'USD',
        createdAt: new Date().toISOString(),
      });
      // Money goes only to an open wallet.
      await openWallet(`recipient-of-${sub}`, new Date().toISOString());
      const petId = nextBenchPetId();
      await client.send(new PutCommand({ TableName: petsTable, Item: fullPet(petId) }));
      callers.push({ sub, token, petId, connection: new KeepAliveConnection('127.0.0.1', port) });
    }

    const viaGateway = (name: string) => (caller: Caller) => callRoute(name, caller);
    const direct = floorOf(client, petsTable, walletsTable);
    await checkFloors(client, direct, functionDirs, callers[0] as Caller);

    // Warms both paths (JIT of Node and of DynamoDB Local's JVM, the authorizer cache,
    // connections). DynamoDB Local needs a few thousand requests before its per-request CPU stops
    // falling (to a fifth of where it starts): measured earlier, the first route would meet a
    // colder database than the last, and the JIT compiler would compete for the cores.
    progress(`warming up: ${options.warmUpRequests} requests per route and side`);
    for (const name of functionDirs) {
      await runLoad(callers, options.warmUpRequests, options.batchTimeoutMs, viaGateway(name));
      const floor = direct[name];
      if (floor) await runLoad(callers, options.warmUpRequests, options.batchTimeoutMs, floor);
    }

    const results: RouteEndToEnd[] = [];
    const perBatch = Math.ceil(options.requests / options.rounds);
    for (const name of functionDirs) {
      progress(`measuring ${name}`);
      const floor = direct[name];
      const gatewayRuns: LoadRun[] = [];
      const floorRuns: LoadRun[] = [];
      for (let round = 0; round < options.rounds; round++) {
        // Alternating which side goes first spreads any drift of the machine over both.
        const sides = [
          async () =>
            gatewayRuns.push(await runLoad(callers, perBatch, options.batchTimeoutMs, viaGateway(name))),
          async () => {
            if (floor) floorRuns.push(await runLoad(callers, perBatch, options.batchTimeoutMs, floor));
          },
        ];
        if (round % 2 === 1) sides.reverse();
        for (const side of sides) await side();
      }
      results.push({
        name,
        gateway: summarise(gatewayRuns),
        ...(floor ? { floor: summarise(floorRuns) } : {}),
      });
    }
    client.destroy();
    return results;
  } finally {
    for (const caller of callers) caller.connection.close();
    await stopGateway(gateway);
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** The DynamoDB calls of each route, made directly with the SDK (see `round-trips.test.ts`). */
function floorOf(
  client: DynamoDBDocumentClient,
  petsTable: string,
  walletsTable: string,
): Record<string, ((caller: Caller) => Promise<void>) | undefined> {
  return {
    'add-pet': async () => {
      await client.send(
        new PutCommand({
          TableName: petsTable,
          Item: fullPet(nextBenchPetId()),
          ConditionExpression: 'attribute_not_exists(id)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    },
    'get-pet': async (caller) => {
      await client.send(
        new GetCommand({ TableName: petsTable, Key: { id: caller.petId }, ConsistentRead: true }),
      );
    },
    'get-balance': async (caller) => {
      await client.send(
        new GetCommand({
          TableName: walletsTable,
          Key: { pk: `WALLET#${caller.sub}` },
          ConsistentRead: true,
        }),
      );
    },
    // The transaction of `commitTransfer` with an Idempotency-Key, item for item.
    'send-money': async (caller) => {
      const transfer = {
        transferId: randomUUID(),
        fromAddress: caller.sub,
        toAddress: `recipient-of-${caller.sub}`,
        amountMinor: 1234,
        currency: 'USD',
        createdAt: new Date().toISOString(),
      };
      const now = transfer.createdAt;
      const nowEpoch = Math.floor(Date.now() / 1000);
      await client.send(
        new TransactWriteCommand({
          ClientRequestToken: transfer.transferId,
          TransactItems: [
            {
              Update: {
                TableName: walletsTable,
                Key: { pk: `WALLET#${transfer.fromAddress}` },
                UpdateExpression: 'SET balance = balance - :amount, updatedAt = :now',
                ConditionExpression: 'balance >= :amount',
                ExpressionAttributeValues: { ':amount': transfer.amountMinor, ':now': now },
              },
            },
            {
              Update: {
                TableName: walletsTable,
                Key: { pk: `WALLET#${transfer.toAddress}` },
                UpdateExpression: 'ADD balance :amount SET updatedAt = :now',
                ExpressionAttributeValues: { ':amount': transfer.amountMinor, ':now': now },
              },
            },
            {
              Put: {
                TableName: walletsTable,
                Item: { pk: `TRANSFER#${transfer.transferId}`, kind: 'transfer', ...transfer },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: walletsTable,
                Item: {
                  pk: `IDEMPOTENCY#${JSON.stringify([caller.sub, randomUUID()])}`,
                  kind: 'idempotency',
                  transfer,
                  expiresAt: nowEpoch + 86_400,
                },
                ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowEpoch',
                ExpressionAttributeValues: { ':nowEpoch': nowEpoch },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      );
    },
  };
}

/**
 * A floor is only a floor if it makes exactly its route's DynamoDB calls: runs each once and
 * compares the operations sent (X-Amz-Target, in order) with the route's, before anything is timed.
 */
async function checkFloors(
  client: DynamoDBDocumentClient,
  direct: Record<string, ((caller: Caller) => Promise<void>) | undefined>,
  functionDirs: readonly string[],
  caller: Caller,
): Promise<void> {
  const sent: string[] = [];
  const name = 'benchOperationLog';
  client.middlewareStack.add(
    (next) => (args) => {
      const headers = (args.request as { headers?: Record<string, string> }).headers;
      sent.push(headers?.['x-amz-target']?.split('.')[1] ?? 'unknown');
      return next(args);
    },
    { step: 'finalizeRequest', name },
  );
  try {
    for (const dir of functionDirs) {
      const floor = direct[dir];
      if (!floor) continue;
      sent.length = 0;
      await floor(caller);
      const expected = DYNAMODB_CALLS[dir] ?? [];
      if (sent.join() !== expected.join()) {
        throw new Error(`The floor of ${dir} sent ${sent.join() || 'nothing'}, not ${expected.join()}`);
      }
    }
  } finally {
    client.middlewareStack.remove(name);
  }
}

/** One request of route `name` through the gateway; anything but a 200 fails the benchmark. */
async function callRoute(name: string, caller: Caller): Promise<void> {
  const spec = routeRequest(name, caller.sub, caller.token);
  const path = name === 'get-pet' ? `/api/v3/pet/${caller.petId}` : spec.path;
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(spec.token === undefined ? {} : { authorization: `Bearer ${spec.token}` }),
    ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...spec.headers,
  };
  const response = await caller.connection.request(spec.method, path, headers, spec.body);
  if (response.status !== 200) throw new Error(`${spec.method} ${path}: ${response.status} ${response.body}`);
}

interface LoadRun {
  readonly latenciesMs: number[];
  readonly wallMs: number;
}

/**
 * `count` operations by `callers.length` concurrent workers, each as its own caller, one request
 * at a time (a closed loop), stopping early at `timeoutMs`.
 */
async function runLoad(
  callers: readonly Caller[],
  count: number,
  timeoutMs: number,
  operation: (caller: Caller) => Promise<void>,
): Promise<LoadRun> {
  const latenciesMs: number[] = [];
  const started = performance.now();
  const deadline = started + timeoutMs;
  let issued = 0;
  await Promise.all(
    callers.map(async (caller) => {
      while (issued < count && performance.now() < deadline) {
        issued++;
        const sent = performance.now();
        await operation(caller);
        latenciesMs.push(performance.now() - sent);
      }
    }),
  );
  return { latenciesMs, wallMs: performance.now() - started };
}

function summarise(runs: readonly LoadRun[]): Latency {
  const all = runs.flatMap((run) => run.latenciesMs);
  const wallMs = runs.reduce((sum, run) => sum + run.wallMs, 0);
  return {
    count: all.length,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    throughput: all.length / (wallMs / 1000),
  };
}

/**
 * Runs the local stack as `npm start` does, quiet, and resolves once its banner says it is ready.
 * Its stdout, where the functions log every request, and its stderr go to a file as in the warm
 * benchmark: a pipe drained by this busy process would make each line cost what the scheduler
 * decides, and wake this process, which measures the floor too, for nothing.
 */
async function startGateway(
  port: number,
  stateDir: string,
  nodeOptions: readonly string[],
): Promise<ChildProcess> {
  const logPath = join(stateDir, 'gateway.log');
  const log = await open(logPath, 'w');
  // Each worker sends thousands of requests with one token: the per-caller limit would refuse them.
  const args = [...nodeOptions, 'infra/local/start.ts', '--quiet', '--caller-rate-limit', 'off'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...(process.env.HOME ? { HOME: process.env.HOME } : {}),
      ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}),
      PORT: String(port),
      LOCAL_STATE_DIR: stateDir,
    },
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  const deadline = Date.now() + 120_000;
  try {
    for (;;) {
      const banner = (await readFile(logPath, 'utf8')).slice(0, 20_000);
      if (banner.includes('Local API ready at')) {
        if (banner.includes('WARNING:')) throw new Error(`A function failed to load:\n${banner}`);
        return child;
      }
      if (child.exitCode !== null)
        throw new Error(`The local stack exited with ${child.exitCode}:\n${banner}`);
      if (Date.now() > deadline) throw new Error(`The local stack was not ready in 120 s:\n${banner}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stopGateway(child);
    throw error;
  }
}

/** SIGTERM makes `start.ts` stop the server and DynamoDB Local before it exits. */
async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}
