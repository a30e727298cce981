/**
 * End to end: every route through the local gateway (its own process, with DynamoDB Local behind
 * it) at a fixed concurrency, next to the floor: a bare node:http server in its own process making
 * only the route's DynamoDB calls with the functions' client (`bench/floor-server.ts`), driven by
 * the same client, workers and requests. The floor pays the same HTTP hop, so what the ratio
 * measures is the code between the hop and DynamoDB.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { freePort } from '#infra/local/dynamodb-local.ts';
import { signLocalToken } from '#infra/local/issuer.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { shardOf } from '#shared/pets/pet-index.ts';
import { HISTORY_INDEX } from '#shared/wallet/dynamodb/keys.ts';
import { walletAccount } from '#shared/wallet/model/accounts.ts';
import { CALLER_HEADER, checkFloors, floorOperations } from './floor.ts';
import { KeepAliveConnection } from './keep-alive-client.ts';
import { ALL_SCOPES } from './lambda-events.ts';
import { startFloorServer, startGateway, stopGateway } from './processes.ts';
import { type Estimate, estimate, percentile, type Undecided } from './stats.ts';
import {
  BENCH_ITEMS,
  type CallerItems,
  DYNAMODB_CALLS,
  fullPet,
  nextBenchPetId,
  routeRequest,
  successStatus,
} from './workload.ts';

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
  /** Per round, the gateway's p50 over the floor's; empty without a floor. */
  readonly ratios: readonly number[];
  /** Their median and interval: what the budget judges. */
  readonly ratio?: Estimate;
}

export interface EndToEndOptions {
  readonly concurrency: number;
  /** Measured requests per route, side (gateway, floor) and round. */
  readonly batchRequests: number;
  readonly rounds: number;
  /** At most this many more sets of `rounds`, for the routes whose verdict is still open. */
  readonly extraSets: number;
  readonly undecided: Undecided;
  /** Warm-up requests per route and side, before any is measured. */
  readonly warmUpRequests: number;
  /** Upper bound on one batch, in case the machine is far slower than expected. */
  readonly batchTimeoutMs: number;
  readonly onProgress?: (message: string) => void;
  /** Extra Node.js options of the gateway process, e.g. `--cpu-prof`. */
  readonly gatewayNodeOptions?: readonly string[];
}

/**
 * One caller per concurrent worker: its own token, funded wallet and pet, so workers never
 * contend, and its own kept-alive connection to the gateway. Its `transferId` is its funding
 * deposit, the movement get-transfer reads; its endpoint and event are {@link BENCH_ITEMS}'s, as
 * no route that names one is measured end to end (`WITHOUT_END_TO_END` of ./e2e-routes.ts).
 */
interface Caller extends CallerItems {
  readonly sub: string;
  readonly token: string;
  readonly connection: KeepAliveConnection;
  /** Its kept-alive connection to the floor server. */
  readonly floorConnection: KeepAliveConnection;
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
  // Without the conflict proxy: it stands for DynamoDB's behaviour, not for a hop AWS has, and it
  // would run on the gateway's own event loop, serving the floor's calls there too.
  const gateway = await startGateway(port, stateDir, options.gatewayNodeOptions ?? [], ['--no-conflicts']);
  const callers: Caller[] = [];
  let floorServer: ChildProcess | undefined;
  try {
    const stack = await readRunningStack(port, stateDir);
    if (!stack) throw new Error('The local stack wrote no record of itself');
    const floorPort = await freePort();
    floorServer = await startFloorServer(floorPort, stack.env);
    // The repository and client modules read their environment when loaded, as functions do.
    Object.assign(process.env, stack.env);
    const { createDocumentClient } = await import('#shared/dynamodb/client.ts');
    const { createWalletOpening } = await import('#shared/wallet/dynamodb/wallet-opening.ts');
    const { createDepositStore } = await import('#shared/wallet/dynamodb/deposit-store.ts');
    const { createPetRepository } = await import('#shared/pets/pet-repository.ts');
    const { makeRecordDeposit } = await import('#shared/wallet/deposit/record-deposit.ts');
    const client = createDocumentClient();
    const petsTable = stack.env[tables.pets.envVar] as string;
    const walletsTable = stack.env[tables.wallets.envVar] as string;
    const openWallet = createWalletOpening({ client, tableName: walletsTable });
    // Pets are added as add-pet adds them: with their status shard and tag entries (the indexes).
    const petRepository = createPetRepository({ client, tableName: petsTable });
    // The status search reads the status's shards in turn until its page (20) is full: with more
    // than 20 pets in the first shard, one Query fills it, as in any catalog of some size.
    for (let seeded = 0; seeded < 25; ) {
      const id = nextBenchPetId();
      if (shardOf(id) !== 0) continue;
      await petRepository.insert(fullPet(id));
      seeded++;
    }
    const recordDeposit = makeRecordDeposit({
      deposits: createDepositStore({ client, tableName: walletsTable }),
      ids: { next: randomUUID },
    });

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
      await petRepository.insert(fullPet(petId));
      // The deposit's id, from the caller's one entry so far (the history index is eventual).
      let transferId: string | undefined;
      while (transferId === undefined) {
        const { Items } = await client.send(
          new QueryCommand({
            TableName: walletsTable,
            IndexName: HISTORY_INDEX,
            KeyConditionExpression: 'account = :a',
            ExpressionAttributeValues: { ':a': walletAccount(sub) },
            Limit: 1,
          }),
        );
        transferId = Items?.[0]?.transferId as string | undefined;
      }
      callers.push({
        ...BENCH_ITEMS,
        sub,
        token,
        petId,
        transferId,
        connection: new KeepAliveConnection('127.0.0.1', port),
        floorConnection: new KeepAliveConnection('127.0.0.1', floorPort),
      });
    }

    const viaGateway = (name: string) => (caller: Caller) => callRoute(name, caller, caller.connection);
    // The floor server runs these same operations; checked here, with this process's client.
    await checkFloors(
      client,
      floorOperations(client, petsTable, walletsTable),
      functionDirs,
      callers[0] as Caller,
    );
    const direct = Object.fromEntries(
      functionDirs
        .filter((name) => (DYNAMODB_CALLS[name] ?? []).length > 0)
        .map((name) => [name, (caller: Caller) => callRoute(name, caller, caller.floorConnection)]),
    ) as Record<string, ((caller: Caller) => Promise<void>) | undefined>;

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
    for (const name of functionDirs) {
      progress(`measuring ${name}`);
      const floor = direct[name];
      const gatewayRuns: LoadRun[] = [];
      const floorRuns: LoadRun[] = [];
      const ratios: number[] = [];
      const load = (operation: (caller: Caller) => Promise<void>) =>
        runLoad(callers, options.batchRequests, options.batchTimeoutMs, operation);
      const runRounds = async () => {
        for (let round = 0; round < options.rounds; round++) {
          // Alternating which side goes first spreads any drift of the machine over both.
          const floorFirst = round % 2 === 1;
          const floorBefore = floor && floorFirst ? await load(floor) : undefined;
          const gatewayRun = await load(viaGateway(name));
          const floorRun = floor && !floorFirst ? await load(floor) : floorBefore;
          gatewayRuns.push(gatewayRun);
          if (floorRun) {
            floorRuns.push(floorRun);
            ratios.push(percentile(gatewayRun.latenciesMs, 50) / percentile(floorRun.latenciesMs, 50));
          }
        }
      };
      await runRounds();
      for (let set = 0; floor && set < options.extraSets && options.undecided(name, ratios); set++) {
        progress(`inconclusive, ${options.rounds} more rounds of ${name}`);
        await runRounds();
      }
      results.push({
        name,
        gateway: summarise(gatewayRuns),
        ...(floor ? { floor: summarise(floorRuns), ratio: estimate(ratios) } : {}),
        ratios,
      });
    }
    client.destroy();
    return results;
  } finally {
    for (const caller of callers) {
      caller.connection.close();
      caller.floorConnection.close();
    }
    if (floorServer) await stopGateway(floorServer);
    await stopGateway(gateway);
    await rm(stateDir, { recursive: true, force: true });
  }
}

/**
 * One request of route `name` on `connection`, the gateway's or the floor server's (the same
 * request to both; the floor server is told the caller in a header, as it checks no token). Anything
 * but the route's success status (the floor server's: 200) fails the benchmark.
 */
async function callRoute(name: string, caller: Caller, connection: KeepAliveConnection): Promise<void> {
  const spec = routeRequest(name, caller.sub, caller.token, caller);
  const path = spec.query === undefined ? spec.path : `${spec.path}?${spec.query}`;
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(spec.token === undefined ? {} : { authorization: `Bearer ${spec.token}` }),
    ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...Object.fromEntries(
      Object.entries(spec.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
    ),
    ...(connection === caller.floorConnection ? { [CALLER_HEADER]: caller.sub } : {}),
  };
  const response = await connection.request(spec.method, path, headers, spec.body);
  const expected = connection === caller.floorConnection ? 200 : successStatus(name);
  if (response.status !== expected)
    throw new Error(`${spec.method} ${path}: ${response.status} ${response.body}`);
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
