/**
 * What the local stack's functions run on, started before them and stopped after them: DynamoDB
 * Local (or one already running) with the tables, behind the conflict proxy; the local S3 (s3rver)
 * with the buckets. `gateway.ts` starts these, then the functions.
 */
import { mkdir } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { ensureTables, startDynamoDbLocal } from './dynamodb-local.ts';
import { DynamoDbProxy } from './dynamodb-proxy.ts';
import { ensureBuckets, startS3Local } from './s3-local.ts';

export interface BackingServicesOptions {
  /** Directory where DynamoDB Local keeps its data; in memory when absent. */
  readonly dbPath?: string;
  /** Port of DynamoDB Local, for tools that want a fixed one; any free port when absent. */
  readonly dynamodbPort?: number;
  /** An already running DynamoDB (Local) to use instead of starting one; `dbPath` is then ignored. */
  readonly dynamodbEndpoint?: string;
  /** Directory where the local S3 (s3rver) keeps its objects; a temporary one, removed at stop, when absent. */
  readonly s3Path?: string;
  /** An already running local S3 to use instead of starting one; `s3Path` is then ignored. */
  readonly s3Endpoint?: string;
  /**
   * Puts DynamoDB (Local) behind a proxy that raises DynamoDB's transaction conflicts, which
   * DynamoDB Local never does (`dynamodb-proxy.ts`): the functions then meet contention as on AWS.
   * On unless `false`.
   */
  readonly conflicts?: boolean;
  /** Physical table names are `<prefix>-<table>`. */
  readonly tablePrefix?: string;
  /**
   * Called if the DynamoDB Local this stack started exits while the stack runs: every data route
   * would fail from then on, so the caller should stop (`npm start` exits non-zero). Without it,
   * the stack says so on stderr.
   */
  readonly onDynamoDbExit?: (message: string) => void;
}

export interface BackingServices {
  /** The DynamoDB the functions use: the conflict proxy unless `conflicts: false`, else DynamoDB Local. */
  readonly dynamodbEndpoint: string;
  /** DynamoDB Local itself, past the proxy. */
  readonly dynamodbLocalEndpoint: string;
  /** PID of the DynamoDB Local (Java) process started here; absent when another is used. */
  readonly dynamodbPid: number | undefined;
  /** The conflict proxy, with its touch counts; absent with `conflicts: false`. */
  readonly dynamodbProxy: DynamoDbProxy | undefined;
  readonly s3Endpoint: string;
  /** The buckets' names, by the variable the functions read them from. */
  readonly bucketEnv: Readonly<Record<string, string>>;
  /** The tables' names and the buckets', by the variable the functions read them from. */
  readonly tableEnv: Readonly<Record<string, string>>;
}

/**
 * How many requests the stack's proxy lets reach DynamoDB Local at once: enough to keep its
 * threads busy, few enough that a caller's request waits behind a round of the others, not behind
 * every request in the machine (docs/decisions/local-dynamodb-share.md).
 */
const LOCAL_DYNAMODB_SLOTS = 4;

/**
 * Starts (or reaches) DynamoDB Local and the local S3, creates what is missing of the tables and
 * buckets, and puts the conflict proxy in front. Each thing started pushes its stop onto
 * `cleanups`, which the caller runs in reverse; `stopping` says whether the stack is being stopped,
 * so that DynamoDB Local exiting then is no surprise.
 */
export async function startBackingServices(
  options: BackingServicesOptions,
  cleanups: Array<() => Promise<void>>,
  stopping: () => boolean,
): Promise<BackingServices> {
  let dynamodbEndpoint = options.dynamodbEndpoint;
  let dynamodbPid: number | undefined;
  if (dynamodbEndpoint === undefined) {
    const dbPath = options.dbPath === undefined ? undefined : resolvePath(options.dbPath);
    // DynamoDB Local refuses a -dbPath that does not exist.
    if (dbPath !== undefined) await mkdir(dbPath, { recursive: true });
    const dynamo = await startDynamoDbLocal({
      ...(options.dynamodbPort === undefined ? {} : { port: options.dynamodbPort }),
      ...(dbPath === undefined ? {} : { dbPath }),
    });
    dynamodbEndpoint = dynamo.endpoint;
    dynamodbPid = dynamo.pid;
    void dynamo.exited.then(({ code, signal }) => {
      if (stopping()) return;
      const message = `DynamoDB Local (pid ${dynamo.pid}) exited unexpectedly (${signal ?? `code ${code}`}); the API cannot serve without it`;
      (options.onDynamoDbExit ?? ((text) => process.stderr.write(`${text}\n`)))(message);
    });
    cleanups.push(() => dynamo.stop());
  }

  // The local S3 (s3rver, in this process): started before the functions, stopped after them.
  let s3Endpoint = options.s3Endpoint;
  if (s3Endpoint === undefined) {
    const s3 = await startS3Local(
      options.s3Path === undefined ? {} : { directory: resolvePath(options.s3Path) },
    );
    cleanups.push(() => s3.stop());
    s3Endpoint = s3.endpoint;
  }
  const bucketEnv = await ensureBuckets(s3Endpoint, options.tablePrefix ?? 'local');
  const tableEnv = {
    ...(await ensureTables(dynamodbEndpoint, options.tablePrefix ?? 'local')),
    ...bucketEnv,
  };
  const dynamodbLocalEndpoint = dynamodbEndpoint;
  let dynamodbProxy: DynamoDbProxy | undefined;
  if (options.conflicts ?? true) {
    const proxy = await DynamoDbProxy.start(dynamodbLocalEndpoint, {
      conflicts: true,
      record: false,
      callerSlots: LOCAL_DYNAMODB_SLOTS,
    });
    cleanups.push(() => proxy.close());
    dynamodbProxy = proxy;
    dynamodbEndpoint = proxy.endpoint;
  }
  return {
    dynamodbEndpoint,
    dynamodbLocalEndpoint,
    dynamodbPid,
    dynamodbProxy,
    s3Endpoint,
    bucketEnv,
    tableEnv,
  };
}
