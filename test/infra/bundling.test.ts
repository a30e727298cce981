import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ESM_REQUIRE_BANNER, esbuildOptions, PROJECT_ROOT } from '#infra/bundling.ts';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { apiEvent, invoke } from '../support/events.ts';
import { uniquePetId } from '../support/pets.ts';

// The one test that really bundles: local esbuild, offline, no Docker.

let outdir: string;
let bundleDir: string;
let template: Template;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'cdk-bundling-test-'));
  // The CLI turns asset metadata on by default; SAM finds each function's code through it.
  const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
  const stack = new Stack(app, 'Bundling');
  new ProjectFunction(stack, 'addPet', { functionDir: 'add-pet' });
  template = Template.fromStack(stack);
  const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
  bundleDir = join(outdir, fn?.Metadata['aws:asset:path']);
}, 60_000);

afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
});

describe('bundling of a function by CDK', () => {
  it('writes an ESM bundle, its linked source map, and the asset metadata SAM reads', () => {
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    expect(fn?.Metadata).toMatchObject({ 'aws:asset:is-bundled': true, 'aws:asset:property': 'Code' });
    expect(fn?.Properties).toMatchObject({ Handler: 'index.handler', Runtime: 'nodejs24.x' });
    const bundle = readFileSync(join(bundleDir, 'index.mjs'), 'utf8');
    expect(bundle.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    // Linked, so that --enable-source-maps (NODE_OPTIONS) finds it.
    expect(bundle.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
    expect(JSON.parse(readFileSync(join(bundleDir, 'index.mjs.map'), 'utf8'))).toMatchObject({ version: 3 });
  });

  it('bundles every dependency, the AWS SDK included: only Node.js built-ins stay imports', () => {
    const bundle = readFileSync(join(bundleDir, 'index.mjs'), 'utf8');
    const imported = [...bundle.matchAll(/\b(?:from|import\()\s*["']([^"']+)["']/g)].map((match) => match[1]);
    expect(imported.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    expect(imported.filter((specifier) => !builtins.has(specifier?.replace(/^node:/, '') ?? ''))).toEqual([]);
    // Left to require() are only the SDK's optional SigV4a signers, which it loads inside try/catch.
    const required = new Set(
      [...bundle.matchAll(/\brequire\(\s*["']([^"']+)["']\)/g)].map((match) => match[1]),
    );
    for (const specifier of required) {
      expect(
        builtins.has(specifier?.replace(/^node:/, '') ?? '') ||
          /^@aws-sdk\/signature-v4(a|-crt)$/.test(specifier ?? ''),
      ).toBe(true);
    }
    // The SDK client is in the bundle itself rather than taken from the runtime.
    expect(bundle).toContain('DynamoDBClient');
  });

  it('is byte-identical to a direct esbuild build with esbuildOptions()', async () => {
    const direct = mkdtempSync(join(tmpdir(), 'esbuild-direct-'));
    try {
      const entry = join(PROJECT_ROOT, 'functions', 'add-pet', 'handler.ts');
      await build({ ...esbuildOptions(entry, join(direct, 'index.mjs')), logLevel: 'silent' });
      expect(readFileSync(join(direct, 'index.mjs')).equals(readFileSync(join(bundleDir, 'index.mjs')))).toBe(
        true,
      );
    } finally {
      rmSync(direct, { recursive: true, force: true });
    }
  });

  /** The source files esbuild puts into a function's bundle, paths relative to the project. */
  async function bundledInputs(functionDir: string): Promise<string[]> {
    const direct = mkdtempSync(join(tmpdir(), `esbuild-${functionDir}-`));
    try {
      const entry = join(PROJECT_ROOT, 'functions', functionDir, 'handler.ts');
      const { metafile } = await build({
        ...esbuildOptions(entry, join(direct, 'index.mjs')),
        metafile: true,
        logLevel: 'silent',
      });
      return Object.keys(metafile.inputs);
    } finally {
      rmSync(direct, { recursive: true, force: true });
    }
  }

  it('carries into the balance function no code that writes a movement', async () => {
    const ours = (await bundledInputs('get-balance')).filter((path) => path.startsWith('shared/wallet/'));
    expect(ours).toContain('shared/wallet/dynamodb/balance-store.ts');
    for (const writer of [
      'dynamodb/ledger-commit',
      'dynamodb/transfer-store',
      'dynamodb/credit-store',
      'dynamodb/deposit-store',
      'send/send-money',
    ]) {
      expect(ours).not.toContain(`shared/wallet/${writer}.ts`);
    }
  });

  it('carries into the replay function, which only names an endpoint, no endpoint management and no address checks', async () => {
    const inputs = await bundledInputs('replay-webhook');
    expect(inputs).toContain('shared/webhooks/endpoint-id.ts');
    expect(inputs).toContain('shared/webhooks/dynamodb/task-store.ts');
    for (const management of [
      'shared/webhooks/endpoint-functions.ts',
      'shared/webhooks/endpoints/manage-endpoints.ts',
      'shared/webhooks/model/destination.ts',
    ]) {
      expect(inputs).not.toContain(management);
    }
    expect(inputs.filter((path) => path.includes('node_modules/ipaddr.js/'))).toEqual([]);
  });

  it('runs: the bundled handler stores a pet in DynamoDB Local', async () => {
    const bundled = (await import(pathToFileURL(join(bundleDir, 'index.mjs')).href)) as {
      handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
    };
    const pet = { id: uniquePetId(), name: 'bundled', photoUrls: [] };
    const response = await invoke(
      bundled.handler,
      apiEvent({ method: 'POST', path: '/api/v3/pet', scopes: ['write:pets'], body: pet }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual(pet);
  });
});
