import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceApp } from '#infra/app.ts';
import { localResources, resolveEnvironment } from '#infra/local/invoke/local-resources.ts';
import {
  findFunction,
  invocableNames,
  isFresh,
  readFunctions,
  type TemplateFunction,
} from '#infra/local/invoke/template.ts';
import { type RunningStack, stackRecordPath } from '#infra/local/stack-record.ts';
import { testContext } from '../support/cdk.ts';

// How `npm run invoke` reads the synthesized service template (bundling skipped: bundling.test.ts
// and bundle-runner.test.ts run real bundles).

let outdir: string;
let functions: TemplateFunction[];

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'invoke-template-test-'));
  createServiceApp({ outdir, context: testContext({ 'aws:cdk:enable-asset-metadata': true }) }).app.synth();
  functions = readFunctions(outdir, 'dev');
}, 60_000);

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
    expect(authorizer).toMatchObject({ AUTH_ISSUER: local.AUTH_ISSUER, AUTH_JWKS_URL: local.AUTH_JWKS_URL });
    expect(authorizer).not.toHaveProperty('DYNAMODB_ENDPOINT');
    expect(() => resolveEnvironment(findFunction(functions, 'addPet'), {})).toThrow(/PETS_TABLE_NAME/);
  });

  it('count as fresh only when the synthesis is newer than its inputs and holds the stage', () => {
    expect(isFresh(outdir, 'dev')).toBe(true);
    expect(isFresh(outdir, 'prod')).toBe(false);
    expect(isFresh(join(outdir, 'missing'), 'dev')).toBe(false);
  });
});

describe('what npm run invoke runs a function against', () => {
  /** A state directory holding the records of stacks on `ports`, each "run" by this process. */
  function stateDirWith(ports: readonly number[]): string {
    const dir = mkdtempSync(join(tmpdir(), 'invoke-resources-'));
    for (const port of ports) {
      const record: RunningStack = {
        baseUrl: `http://127.0.0.1:${port}`,
        pid: process.pid,
        dynamodbEndpoint: 'http://127.0.0.1:1',
        dynamodbLocalEndpoint: 'http://127.0.0.1:1',
        conflicts: true,
        env: { WALLETS_TABLE_NAME: `stack-${port}-wallets` },
      };
      writeFileSync(stackRecordPath(dir, port), JSON.stringify(record));
    }
    return dir;
  }

  it('is the one stack running when no port is given, named', async () => {
    const stateDir = stateDirWith([3861]);
    try {
      const local = await localResources(findFunction(functions, 'getBalance'), {
        port: undefined,
        stateDir,
      });
      expect(local.env).toMatchObject({ WALLETS_TABLE_NAME: 'stack-3861-wallets' });
      expect(local.issuerPort).toBe(3861);
      expect(local.source).toContain('the local stack at http://127.0.0.1:3861 (the only one running');
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('is none of several stacks: it names them all and asks for PORT', async () => {
    const stateDir = stateDirWith([3861, 4100]);
    try {
      await expect(
        localResources(findFunction(functions, 'getBalance'), { port: undefined, stateDir }),
      ).rejects.toThrow(
        /2 local stacks are running, at http:\/\/127\.0\.0\.1:3861, http:\/\/127\.0\.0\.1:4100: say which with PORT/,
      );
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('is, with no stack running, an empty database of its own, and it says so plainly', {
    timeout: 90_000,
  }, async () => {
    const stateDir = stateDirWith([]);
    const local = await localResources(findFunction(functions, 'getBalance'), { port: undefined, stateDir });
    try {
      expect(local.source).toMatch(
        /^No local stack is running \(`npm start`\), so this call gets a DynamoDB Local of its own, in memory with empty tables: it sees none of your data/,
      );
    } finally {
      await local.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
