import './quiet-functions.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { defaultServiceSettings, walletEnvironment } from '#infra/environment.ts';
import {
  type DynamoDbLocal,
  ensureTables,
  LOCAL_AWS_ENV,
  startDynamoDbLocal,
} from '#infra/local/dynamodb-local.ts';
import { startLocalStack } from '#infra/local/gateway.ts';
import type { BundledOptions } from '#infra/local/invoke/bundled-functions.ts';
import { startS3Local } from '#infra/local/s3-local.ts';
import { buckets, S3_ENDPOINT_ENV } from '#shared/s3/buckets.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Environment every test worker runs with: DynamoDB Local endpoint, table names, settings. */
    env: Record<string, string>;
    /** The local gateway the end-to-end tests call over HTTP, and where its issuer keeps its keys. */
    gateway: {
      baseUrl: string;
      port: number;
      stateDir: string;
      /** The one origin its CORS allows, so that the suite sees CORS headers. */
      corsAllowedOrigin: string;
      /** How it runs the functions: from the sources in its process, or their bundles from cdk.out. */
      mode: 'in-process' | 'bundled';
    };
  }
}

/**
 * The retry schedule of the e2e stack's webhook dispatcher: the standard one's ten attempts in
 * about 25 s instead of a day and a half, so that a receiver failing or shut for a while is seen
 * to get every event within a test (test/e2e/webhook-delivery-load.test.ts).
 */
export const E2E_WEBHOOK_RETRY_SCHEDULE = '0,0.5,1,2,2,3,3,4,5,5';

/** The one origin the e2e gateway allows cross-origin calls from. */
const E2E_ALLOWED_ORIGIN = 'https://app.example.com';

/**
 * One DynamoDB Local and one local S3 (s3rver) for the whole run's workers; tests isolate their data by
 * unique keys. The local gateway of the end-to-end tests has a DynamoDB Local of its own: one
 * serves every request through a single SQLite thread, so with the integration tests' load beside
 * them the gateway's functions waited seconds in that queue (a payment's 2 s attempts ran out:
 * 503), as they never wait on DynamoDB for other tenants' work. It shares the S3, and has a throw-away state
 * directory so that the run neither reads nor overwrites the developer's issuer keys.
 * `bundled`: the gateway runs the synthesized bundles (the `bundled` project, see vitest.config.ts).
 */
export async function setupWithGateway(project: TestProject, bundled?: BundledOptions) {
  /** What has started so far, stopped at the end (or on a failed start) whatever else fails. */
  const started: (() => Promise<unknown>)[] = [];
  let gateway: Awaited<ReturnType<typeof startLocalStack>> | undefined;
  const stop = async () => {
    if (gateway?.mode === 'bundled') {
      const stats = Object.entries(gateway.functionStats()).filter(([, figures]) => figures.invocations > 0);
      console.log(
        `Bundled gateway, invocations/cold starts: ${stats.map(([name, figures]) => `${name} ${figures.invocations}/${figures.coldStarts}`).join(', ')}`,
      );
    }
    try {
      await gateway?.stop();
    } finally {
      await Promise.allSettled(started.map((stopOne) => stopOne()));
    }
  };
  try {
    // Java ends with this process even when a run is killed outright (Ctrl+C twice, a closed pipe).
    const locals = await Promise.allSettled([startDynamoDbLocal(), startDynamoDbLocal()]);
    for (const local of locals) if (local.status === 'fulfilled') started.push(() => local.value.stop());
    const [dynamo, stackDynamo] = locals.map((local) => {
      if (local.status === 'rejected') throw local.reason;
      return local.value;
    }) as [DynamoDbLocal, DynamoDbLocal];
    // The local S3 of the image functions, in a temporary directory removed at stop.
    const s3 = await startS3Local();
    started.push(() => s3.stop());
    const stateDir = await mkdtemp(join(tmpdir(), 'wallet-catalog-e2e-'));
    started.push(() => rm(stateDir, { recursive: true, force: true }));
    const tableEnv = await ensureTables(dynamo.endpoint, `test-${process.pid}`);
    const env: Record<string, string> = {
      ...LOCAL_AWS_ENV,
      ...tableEnv,
      ...walletEnvironment(defaultServiceSettings),
      DYNAMODB_ENDPOINT: dynamo.endpoint,
    };
    // The gateway's functions are quiet in this process (./quiet-functions.ts); bundled, their
    // lines go to `onLog`, which drops them.
    Object.assign(process.env, {
      WEBHOOK_RETRY_SCHEDULE: process.env.WEBHOOK_RETRY_SCHEDULE ?? E2E_WEBHOOK_RETRY_SCHEDULE,
    });
    // Port 0: runs side by side with `npm start` and with each other.
    gateway = await startLocalStack({
      port: 0,
      stateDir,
      dynamodbEndpoint: stackDynamo.endpoint,
      s3Endpoint: s3.endpoint,
      // Its functions meet DynamoDB's transaction conflicts, as on AWS and as under `npm start`;
      // the tests' own reads and seeding of its tables go to its DynamoDB Local directly (the
      // stack record's `dynamodbLocalEndpoint`).
      conflicts: true,
      tablePrefix: `e2e-${process.pid}${bundled ? '-bundled' : ''}`,
      // CORS on, for one origin, so that the suite sees its headers; off is the default of a stage.
      corsAllowedOrigins: [E2E_ALLOWED_ORIGIN],
      ...(bundled === undefined ? {} : { bundled }),
    });
    for (const [name, message] of Object.entries(gateway.loadErrors)) {
      console.warn(`local gateway (${gateway.mode}): ${name} failed to load: ${message}`);
    }
    // The gateway's images bucket, for tests that look at what an upload stored (or did not).
    project.provide('env', {
      ...env,
      [S3_ENDPOINT_ENV]: s3.endpoint,
      [buckets.images.envVar]: gateway.env[buckets.images.envVar] as string,
    });
    project.provide('gateway', {
      baseUrl: gateway.baseUrl,
      port: gateway.port,
      stateDir,
      corsAllowedOrigin: E2E_ALLOWED_ORIGIN,
      mode: gateway.mode,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

export default function setup(project: TestProject) {
  return setupWithGateway(project);
}
