import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { esbuildOptions, PROJECT_ROOT } from '#infra/bundling.ts';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { defaultServiceSettings, walletEnvironment } from '#infra/environment.ts';
import type { FunctionSettings } from '#infra/local/invoke/lambda-env.ts';
import { type BundlePool, createBundlePool, formatReport } from '#infra/local/invoke/pool.ts';
import { MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES } from '#infra/local/invoke/protocol.ts';
import { apiEvent, uniqueSub } from '../support/events.ts';
import { uniquePetId } from '../support/pets.ts';

// The runner of `npm run invoke` against real bundles (built with the options CDK bundles with:
// bundling.test.ts proves the bytes identical) and small hand-written ones for the contract.

let dir: string;
const pools: BundlePool[] = [];

/** A function whose bundle is `source` written as `index.mjs`. */
function handWritten(
  name: string,
  source: string,
  settings: Partial<FunctionSettings> = {},
): FunctionSettings {
  const taskRoot = join(dir, name);
  mkdirSync(taskRoot, { recursive: true });
  writeFileSync(join(taskRoot, 'index.mjs'), source);
  return settingsFor(name, taskRoot, settings);
}

function settingsFor(
  name: string,
  taskRoot: string,
  settings: Partial<FunctionSettings> = {},
): FunctionSettings {
  return {
    functionName: name,
    taskRoot,
    handler: 'index.handler',
    runtime: 'nodejs24.x',
    memorySizeMb: 256,
    timeoutSeconds: 5,
    environment: {},
    region: 'us-east-1',
    accountId: '000000000000',
    ...settings,
  };
}

function pool(fn: FunctionSettings): BundlePool {
  const created = createBundlePool(fn, { onLog: () => {} });
  pools.push(created);
  return created;
}

async function bundle(functionDir: string, outdir: string, external: string[] = []): Promise<string> {
  const entry = join(PROJECT_ROOT, 'functions', functionDir, 'handler.ts');
  const options = esbuildOptions(entry, join(outdir, 'index.mjs'));
  await build({ ...options, external: [...(options.external ?? []), ...external], logLevel: 'silent' });
  return outdir;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bundle-runner-test-'));
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('the bundle runner with real bundles', () => {
  it('runs add-pet and get-pet bundles in their own environments against DynamoDB Local', async () => {
    const env = inject('env');
    const local = {
      PETS_TABLE_NAME: env.PETS_TABLE_NAME ?? '',
      DYNAMODB_ENDPOINT: env.DYNAMODB_ENDPOINT ?? '',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      STAGE: 'test',
    };
    const [addRoot, getRoot] = await Promise.all([
      bundle('add-pet', join(dir, 'add-pet')),
      bundle('get-pet', join(dir, 'get-pet')),
    ]);
    const addPet = pool(settingsFor('addPet', addRoot, { environment: local, memorySizeMb: 1024 }));
    const getPet = pool(settingsFor('getPetById', getRoot, { environment: local, memorySizeMb: 1024 }));
    const sub = uniqueSub();
    const pet = { id: uniquePetId(), name: 'runner', photoUrls: [] };

    const added = await addPet.invoke(
      apiEvent({ method: 'POST', path: '/api/v3/pet', sub, scopes: ['write:pets'], body: pet }),
    );
    expect(added.ok).toBe(true);
    const read = await getPet.invoke(
      apiEvent({
        method: 'GET',
        path: `/api/v3/pet/${pet.id}`,
        resource: '/api/v3/pet/{petId}',
        pathParameters: { petId: String(pet.id) },
        sub,
        scopes: ['read:pets'],
      }),
    );
    if (!read.ok) throw new Error(JSON.stringify(read.error));
    const response = JSON.parse(read.payload) as { statusCode: number; body: string };
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual(pet);
    // A cold start reports its init; the report reads as Lambda's.
    expect(read.report.initDurationMs).toBeGreaterThan(0);
    expect(read.report.maxMemoryUsedMb).toBeGreaterThan(0);
    expect(formatReport(read.requestId, read.report)).toMatch(
      new RegExp(
        `^REPORT RequestId: ${read.requestId}\\tDuration: \\d+\\.\\d\\d ms\\tBilled Duration: \\d+ ms\\tMemory Size: 1024 MB\\tMax Memory Used: \\d+ MB\\tInit Duration: \\d+\\.\\d\\d ms$`,
      ),
    );
  }, 60_000);

  it('fails a bundle with a dependency marked external by mistake with Runtime.ImportModuleError', async () => {
    // Outside the repository, as in Lambda: no node_modules up the tree to find it in.
    const root = await bundle('get-balance', join(dir, 'broken'), ['@middy/core']);
    const result = await pool(settingsFor('broken', root)).invoke(apiEvent());
    expect(result.ok).toBe(false);
    expect(result.ok ? undefined : result.error).toMatchObject({
      errorType: 'Runtime.ImportModuleError',
      errorMessage: expect.stringContaining("'@middy/core'"),
    });
  }, 60_000);

  it('gives a stack trace that names the TypeScript source line, bundled and configured as deployed', async () => {
    // The environment every function's template gives it (bundling skipped: the bundle is built below).
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    new ProjectFunction(new Stack(app, 'SourceMaps'), 'getBalance', { functionDir: 'get-balance' });
    const [fn] = Object.values(
      Template.fromStack(app.node.children[0] as Stack).findResources('AWS::Lambda::Function'),
    );
    const environment = {
      ...walletEnvironment(defaultServiceSettings),
      WALLETS_TABLE_NAME: 'unused',
      ...fn?.Properties.Environment?.Variables,
    };
    const root = await bundle('get-balance', join(dir, 'source-maps'));
    // `null` is no API Gateway event: the handler fails with a TypeError in shared/http/handler.ts.
    const result = await pool(settingsFor('sourceMaps', root, { environment })).invoke(null);
    expect(result.ok ? undefined : result.error.errorType).toBe('TypeError');
    expect(result.ok ? [] : result.error.trace?.[1]).toMatch(/shared\/http\/handler\.ts:\d+:\d+/);
  }, 60_000);
});

describe('the Lambda Node.js 24 handler contract', () => {
  it('gives the handler a context and exactly the environment Lambda gives: its own variables and the reserved ones', async () => {
    process.env.RUNNER_TEST_CANARY = 'the parent environment must not leak';
    const fn = handWritten(
      'context',
      `export const handler = async (event, context) => ({
        event, env: process.env, cwd: process.cwd(),
        context: { ...context, remaining: context.getRemainingTimeInMillis() },
      });`,
      { environment: { OWN: 'value', AWS_REGION: 'eu-west-1' }, memorySizeMb: 512, timeoutSeconds: 7 },
    );
    const requestId = randomUUID();
    const result = await pool(fn).invoke({ hello: 'world' }, { requestId });
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    const seen = JSON.parse(result.payload);
    expect(seen.event).toEqual({ hello: 'world' });
    expect(seen.cwd).toBe(fn.taskRoot);
    expect(seen.context).toMatchObject({
      awsRequestId: requestId,
      functionName: 'context',
      functionVersion: '$LATEST',
      memoryLimitInMB: '512',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:context',
      logGroupName: '/aws/lambda/context',
    });
    expect(seen.context.remaining).toBeGreaterThan(0);
    expect(seen.context.remaining).toBeLessThanOrEqual(7000);
    expect(seen.env).toMatchObject({
      OWN: 'value',
      // Reserved: the function's own setting cannot change it.
      AWS_REGION: 'us-east-1',
      _HANDLER: 'index.handler',
      LAMBDA_TASK_ROOT: fn.taskRoot,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      AWS_LAMBDA_FUNCTION_NAME: 'context',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/context',
      TZ: ':UTC',
    });
    expect(seen.env.AWS_LAMBDA_LOG_STREAM_NAME).toMatch(/^\d{4}\/\d\d\/\d\d\/\[\$LATEST\][0-9a-f]{32}$/);
    expect(seen.env.RUNNER_TEST_CANARY).toBeUndefined();
    delete process.env.RUNNER_TEST_CANARY;
  });

  it('keeps an environment warm between calls and starts a second one for a concurrent call', async () => {
    const warm = pool(
      handWritten(
        'warm',
        `let calls = 0;
        export const handler = async (event) => {
          await new Promise((resolve) => setTimeout(resolve, event.waitMs));
          return { pid: process.pid, calls: ++calls };
        };`,
      ),
    );
    const first = await warm.invoke({ waitMs: 0 });
    const second = await warm.invoke({ waitMs: 0 });
    if (!first.ok || !second.ok) throw new Error('an invocation failed');
    expect(first.report.initDurationMs).toBeDefined();
    expect(second.report.initDurationMs).toBeUndefined();
    expect(JSON.parse(second.payload)).toEqual({ pid: JSON.parse(first.payload).pid, calls: 2 });
    expect(warm.stats()).toEqual({ coldStarts: 1, environments: 1 });

    const [a, b] = await Promise.all([warm.invoke({ waitMs: 300 }), warm.invoke({ waitMs: 300 })]);
    if (!a.ok || !b.ok) throw new Error('an invocation failed');
    expect(JSON.parse(a.payload).pid).not.toBe(JSON.parse(b.payload).pid);
    expect(warm.stats()).toEqual({ coldStarts: 2, environments: 2 });
  });

  it('kills an invocation past its timeout, reports it as Lambda does, and starts afresh', async () => {
    const slow = pool(
      handWritten(
        'slow',
        `export const handler = async (event) => event.hang ? new Promise(() => setInterval(() => {}, 1000)) : process.pid;`,
        { timeoutSeconds: 1 },
      ),
    );
    const before = await slow.invoke({ hang: false });
    const requestId = randomUUID();
    const timedOut = await slow.invoke({ hang: true }, { requestId });
    expect(timedOut.ok ? undefined : timedOut.error).toEqual({
      errorType: 'Sandbox.Timedout',
      errorMessage: `RequestId: ${requestId} Error: Task timed out after 1.00 seconds`,
    });
    const after = await slow.invoke({ hang: false });
    if (!before.ok || !after.ok) throw new Error('an invocation failed');
    expect(after.payload).not.toBe(before.payload);
    expect(after.report.initDurationMs).toBeDefined();
    expect(slow.stats().coldStarts).toBe(2);
  });

  it("returns a thrown error as Lambda's errorType/errorMessage payload and keeps the environment", async () => {
    const failing = pool(
      handWritten(
        'failing',
        `class PaymentError extends Error { name = 'PaymentError'; }
        export const handler = async () => { throw new PaymentError('card declined'); };`,
      ),
    );
    const result = await failing.invoke({});
    expect(result.ok ? undefined : result.error).toMatchObject({
      errorType: 'PaymentError',
      errorMessage: 'card declined',
      trace: expect.arrayContaining([expect.stringContaining('PaymentError: card declined')]),
    });
    await failing.invoke({});
    expect(failing.stats().coldStarts).toBe(1);
  });

  it('ends an environment on an unhandled rejection and fails the call with Runtime.UnhandledPromiseRejection', async () => {
    const leaking = pool(
      handWritten(
        'leaking',
        `export const handler = async () => { Promise.reject(new Error('forgotten')); await new Promise((r) => setTimeout(r, 200)); return 'late'; };`,
      ),
    );
    const result = await leaking.invoke({});
    expect(result.ok ? undefined : result.error).toMatchObject({
      errorType: 'Runtime.UnhandledPromiseRejection',
      errorMessage: 'forgotten',
    });
    await leaking.invoke({}).catch(() => undefined);
    expect(leaking.stats().coldStarts).toBe(2);
  });

  it('fails the init as the runtime does: handler not exported, callback handlers, errors at load', async () => {
    const cases = [
      [
        'missing',
        'export const other = async () => 1;',
        'Runtime.HandlerNotFound',
        'index.handler is undefined or not exported',
      ],
      [
        'callback',
        'export const handler = (event, context, callback) => callback(null, 1);',
        'Runtime.CallbackHandlerDeprecated',
        'removed support for callback-based function handlers',
      ],
      ['syntax', 'export const handler = async () => {', 'Runtime.UserCodeSyntaxError', 'SyntaxError'],
      [
        'config',
        "throw new Error('Missing required environment variable X');",
        'Error',
        'Missing required environment variable X',
      ],
    ] as const;
    for (const [name, source, errorType, message] of cases) {
      const result = await pool(handWritten(name, source)).invoke({});
      expect(result.ok ? undefined : result.error, name).toMatchObject({
        errorType,
        errorMessage: expect.stringContaining(message),
      });
      expect(result.report.initDurationMs, name).toBeDefined();
    }
  });

  it('refuses a request over 6 MB before running anything, and a response over 6 MB after', async () => {
    const echo = pool(handWritten('echo', 'export const handler = async (event) => event;'));
    const tooLargeRequest = await echo.invoke('x'.repeat(MAX_REQUEST_BYTES));
    expect(tooLargeRequest.ok ? undefined : tooLargeRequest.error.errorType).toBe(
      'RequestEntityTooLargeException',
    );
    expect(echo.stats().coldStarts).toBe(0);

    const big = pool(
      handWritten('big', `export const handler = async () => 'x'.repeat(${MAX_RESPONSE_BYTES});`),
    );
    const tooLargeResponse = await big.invoke({});
    expect(tooLargeResponse.ok ? undefined : tooLargeResponse.error).toEqual({
      errorType: 'Function.ResponseSizeTooLarge',
      errorMessage: `Response payload size exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).`,
    });
    // Just under the limit goes through (the JSON string's quotes count).
    const fits = pool(
      handWritten('fits', `export const handler = async () => 'x'.repeat(${MAX_RESPONSE_BYTES - 2});`),
    );
    expect((await fits.invoke({})).ok).toBe(true);
  });
});
