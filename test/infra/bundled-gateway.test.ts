import { randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { esbuildOptions, PROJECT_ROOT } from '#infra/bundling.ts';
import type { AccessLogEntry } from '#infra/local/access-log.ts';
import { type LocalStack, startLocalStack } from '#infra/local/gateway.ts';
import { serviceStackName } from '#infra/local/invoke/template.ts';

// The bundled gateway (`npm start -- --bundled`, and the `bundled` test project) in front of a
// cdk.out holding one broken bundle: a dependency marked external by mistake, which loads from
// the sources (and would load from the repository's node_modules) but not on Lambda.

const STAGE = 'broken';
/** Short, for the 504 below; longer than any cold start here, even on a loaded machine. */
const INTEGRATION_TIMEOUT_MS = 4000;
let cdkOut: string;
let stack: LocalStack;
const logs: string[] = [];
const accessLog: AccessLogEntry[] = [];

/** Bundles `functions/<dir>` as CDK does, with `external` left out of it, into `cdkOut/<asset>`. */
async function bundle(functionDir: string, asset: string, external: string[] = []): Promise<void> {
  const options = esbuildOptions(
    join(PROJECT_ROOT, 'functions', functionDir, 'handler.ts'),
    join(cdkOut, asset, 'index.mjs'),
  );
  await build({ ...options, external: [...(options.external ?? []), ...external], logLevel: 'silent' });
}

/** A function of the template as CDK writes it: its construct path names the operation. */
const templateFunction = (operationId: string, asset: string, timeoutSeconds = 10) => ({
  Type: 'AWS::Lambda::Function',
  Properties: {
    Handler: 'index.handler',
    Runtime: 'nodejs24.x',
    MemorySize: 256,
    Timeout: timeoutSeconds,
    Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps', STAGE } },
  },
  Metadata: {
    'aws:cdk:path': `${serviceStackName(STAGE)}/${operationId}/Function/Resource`,
    'aws:asset:path': asset,
  },
});

beforeAll(async () => {
  // Inside the repository, as cdk.out is: Node would find the left-out package in its node_modules.
  mkdirSync(join(PROJECT_ROOT, '.local'), { recursive: true });
  cdkOut = mkdtempSync(join(PROJECT_ROOT, '.local', 'broken-cdk-out-'));
  await Promise.all([bundle('openapi', 'asset.broken', ['@middy/core']), bundle('api-docs', 'asset.sound')]);
  // A hand-written function that takes longer than the integration timeout, or exits mid-call.
  mkdirSync(join(cdkOut, 'asset.misbehaving'));
  writeFileSync(
    join(cdkOut, 'asset.misbehaving', 'index.mjs'),
    `export const handler = async (event) => {
      if (event.pathParameters.asset === 'exit') process.exit(3);
      await new Promise((resolve) => setTimeout(resolve, 20_000));
      return { statusCode: 200, body: 'late' };
    };`,
  );
  writeFileSync(
    join(cdkOut, `${serviceStackName(STAGE)}.template.json`),
    JSON.stringify({
      Resources: {
        getOpenApiFunction00000001: templateFunction('getOpenApi', 'asset.broken'),
        getApiDocsFunction00000002: templateFunction('getApiDocs', 'asset.sound'),
        getApiDocsAssetFunction00000003: templateFunction('getApiDocsAsset', 'asset.misbehaving', 30),
      },
    }),
  );
  stack = await startLocalStack({
    port: 0,
    stateDir: cdkOut,
    dynamodbEndpoint: inject('env').DYNAMODB_ENDPOINT as string,
    tablePrefix: `broken-${randomInt(2 ** 40)}`,
    callerRateLimit: null,
    integrationTimeoutMs: INTEGRATION_TIMEOUT_MS,
    onRequest: (entry) => accessLog.push(entry),
    bundled: { cdkOut, stage: STAGE, synth: 'never', onLog: (name, line) => logs.push(`${name} | ${line}`) },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(cdkOut, { recursive: true, force: true });
});

describe('the bundled gateway with a dependency marked external by mistake', () => {
  it('answers 502 for that function and logs its init error, while a sound bundle beside it answers', async () => {
    // The mistake is really in the bundle: it imports the package instead of containing it.
    expect(readFileSync(join(cdkOut, 'asset.broken', 'index.mjs'), 'utf8')).toMatch(
      /from\s*["']@middy\/core["']/,
    );

    const broken = await fetch(`${stack.baseUrl}/api/openapi.json`);
    expect(broken.status).toBe(502);
    expect(broken.headers.get('content-type')).toBe('application/problem+json');
    expect(await broken.json()).toMatchObject({ requestId: broken.headers.get('x-amzn-requestid') });
    expect(logs.filter((line) => line.startsWith('getOpenApi | '))).toContainEqual(
      expect.stringMatching(/Runtime\.ImportModuleError.*Cannot find package '@middy\/core'/),
    );

    expect((await fetch(`${stack.baseUrl}/api/docs`)).status).toBe(200);
    expect(stack.functionStats()).toMatchObject({
      getOpenApi: { invocations: 1, coldStarts: 1 },
      getApiDocs: { invocations: 1, coldStarts: 1 },
    });
  });

  it('marks the requests that started an environment in the access log: cold, then warm', async () => {
    const entry = (response: Response) =>
      accessLog.find((logged) => logged.requestId === response.headers.get('x-amzn-requestid'));
    const cold = await fetch(`${stack.baseUrl}/api/openapi.json`);
    const warm = await fetch(`${stack.baseUrl}/api/docs`);
    // The broken function's environments never get warm; the sound one's, started above, is.
    expect(entry(cold)?.coldStarts).toEqual(['getOpenApi']);
    expect(entry(warm)).toMatchObject({ operationId: 'getApiDocs', status: 200 });
    expect(entry(warm)?.coldStarts).toBeUndefined();
  });

  it('keeps answering 502 on every call, each one a fresh environment failing its init', async () => {
    const before = stack.functionStats().getOpenApi?.coldStarts ?? 0;
    expect((await fetch(`${stack.baseUrl}/api/openapi.json`)).status).toBe(502);
    expect(stack.functionStats().getOpenApi?.coldStarts).toBe(before + 1);
  });
});

describe('the bundled gateway with a function that misbehaves at run time', () => {
  it("answers 502 when the function's process exits mid-call (Runtime.ExitError)", async () => {
    const response = await fetch(`${stack.baseUrl}/api/docs/exit`);
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });

  it('answers 504 past the integration timeout, the function still running', async () => {
    const response = await fetch(`${stack.baseUrl}/api/docs/slow`);
    expect(response.status).toBe(504);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });
});
