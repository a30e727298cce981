import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceApp } from '#infra/app.ts';
import { resolveEnvironment } from '#infra/local/invoke/local-resources.ts';
import {
  findFunction,
  invocableNames,
  isFresh,
  readFunctions,
  type TemplateFunction,
} from '#infra/local/invoke/template.ts';
import { testContext } from '../support/cdk.ts';

// How `npm run invoke` reads the synthesized service template (bundling skipped: bundling.test.ts
// and bundle-runner.test.ts run real bundles).

let outdir: string;
let functions: TemplateFunction[];

// A real synthesis, every function bundled by esbuild (seventeen since the pet resource): two minutes on a loaded two-core host.
beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'invoke-template-test-'));
  createServiceApp({ outdir, context: testContext({ 'aws:cdk:enable-asset-metadata': true }) }).app.synth();
  functions = readFunctions(outdir, 'dev');
}, 120_000);

afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
});

describe('the functions npm run invoke finds in the template', () => {
  it('are every route and the authorizer, by operationId or logical id, in any case', () => {
    for (const name of invocableNames()) {
      expect(findFunction(functions, name).name.toLowerCase()).toBe(name.toLowerCase());
    }
    const balance = findFunction(functions, 'getBalance');
    expect(findFunction(functions, balance.logicalId)).toBe(balance);
    expect(() => findFunction(functions, 'nope')).toThrow(/no function "nope".*getBalance/i);
  });

  it("carry the template's handler, memory, timeout, runtime and bundle directory", () => {
    const balance = findFunction(functions, 'getBalance');
    expect(balance).toMatchObject({
      handler: 'index.handler',
      runtime: 'nodejs24.x',
      memorySizeMb: 1024,
      timeoutSeconds: 10,
    });
    // Bundling is skipped here, so the asset is a directory of the project rather than cdk.out's.
    expect(existsSync(balance.assetDir)).toBe(true);
  });

  it('get the local table names, endpoint and issuer where the template names what AWS resolves', () => {
    const local = {
      WALLETS_TABLE_NAME: 'local-wallets',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      AUTH_ISSUER: 'http://127.0.0.1:3000',
      AUTH_AUDIENCE: 'wallet-catalog-api',
      AUTH_JWKS_URL: 'http://127.0.0.1:3000/.well-known/jwks.json',
      AUTH_REQUIRE_LOW_S: 'true',
      PETS_TABLE_NAME: 'local-pets',
    };
    const balance = resolveEnvironment(findFunction(functions, 'getBalance'), local);
    expect(balance).toMatchObject({
      WALLETS_TABLE_NAME: 'local-wallets',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      STAGE: 'dev',
      NODE_OPTIONS: '--enable-source-maps',
      CURRENCY: 'USD',
    });
    // One environment per function: nothing of another function's.
    expect(balance).not.toHaveProperty('PETS_TABLE_NAME');
    expect(balance).not.toHaveProperty('AUTH_ISSUER');
    const authorizer = resolveEnvironment(findFunction(functions, 'authorizer'), local);
    // The local issuer signs ECDSA low-S only; the template (cdk.json) says a stage's provider may not.
    expect(authorizer).toMatchObject({
      AUTH_ISSUER: local.AUTH_ISSUER,
      AUTH_JWKS_URL: local.AUTH_JWKS_URL,
      AUTH_REQUIRE_LOW_S: 'true',
    });
    expect(authorizer).not.toHaveProperty('DYNAMODB_ENDPOINT');
    expect(() => resolveEnvironment(findFunction(functions, 'addPet'), {})).toThrow(/PETS_TABLE_NAME/);
  });

  it('count as fresh only when the synthesis is newer than its inputs and holds the stage', () => {
    expect(isFresh(outdir, 'dev')).toBe(true);
    expect(isFresh(outdir, 'prod')).toBe(false);
    expect(isFresh(join(outdir, 'missing'), 'dev')).toBe(false);
  });
});
