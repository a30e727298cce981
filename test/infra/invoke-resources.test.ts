import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localResources, resolveEnvironment } from '#infra/local/invoke/local-resources.ts';
import type { TemplateFunction } from '#infra/local/invoke/template.ts';
import { type RunningStack, stackRecordPath } from '#infra/local/stack-record.ts';
import { loadOrCreateWebhookSecretsKey } from '#infra/local/webhook-secrets-key.ts';
import { DESTINATION_MODE_ENV } from '#shared/webhooks/model/destination-mode.ts';
import { KMS_KEY_ENV, STATIC_KEY_ENV } from '#shared/webhooks/secrets/keeper.ts';

// What `npm run invoke` runs a function against: the running local stack, or what the one call
// needs, started for it (test/infra/invoke-template.test.ts reads the functions from a template).

/** getBalance as the template describes it: its table's name is what AWS resolves at deploy time. */
const getBalance: TemplateFunction = {
  logicalId: 'getBalanceFunction',
  name: 'getBalance',
  handler: 'index.handler',
  runtime: 'nodejs24.x',
  memorySizeMb: 512,
  timeoutSeconds: 10,
  environment: {
    WALLETS_TABLE_NAME: { 'Fn::GetStackOutput': { OutputName: 'WalletsTableName' } },
    STAGE: 'dev',
  },
  assetDir: tmpdir(),
};

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
      const local = await localResources(getBalance, {
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
      await expect(localResources(getBalance, { port: undefined, stateDir })).rejects.toThrow(
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
    const local = await localResources(getBalance, { port: undefined, stateDir });
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

describe('what npm run invoke gives a webhook function with no stack running', () => {
  /** rotateWebhookSecret as the template describes it: its secrets sealed with a KMS key AWS names at deploy time. */
  const rotateSecret: TemplateFunction = {
    ...getBalance,
    logicalId: 'rotateWebhookSecretFunction',
    name: 'rotateWebhookSecret',
    environment: { [KMS_KEY_ENV]: { Ref: 'WebhookSecretsKey' }, STAGE: 'dev' },
  };

  it("is the local stack's key for the signing secrets and loopback destinations, as npm start gives them", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'invoke-resources-'));
    const local = await localResources(rotateSecret, { port: undefined, stateDir });
    try {
      const env = resolveEnvironment(rotateSecret, local.env);
      expect(env).toMatchObject({
        [STATIC_KEY_ENV]: await loadOrCreateWebhookSecretsKey(stateDir),
        [DESTINATION_MODE_ENV]: 'local',
      });
      expect(env).not.toHaveProperty(KMS_KEY_ENV);
      expect(local.source).toContain('webhook signing secrets');
    } finally {
      await local.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
