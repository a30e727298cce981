import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { LOCAL_AUDIENCE, localIssuerUrl } from '#infra/local/issuer.ts';
import { uniqueSub } from '../support/events.ts';
import { call, gateway, uniquePetId } from './http.ts';

/** The real `npm run token` process; what it prints is tested in-process in test/unit/token-command.test.ts. */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `node infra/local/token.ts` as `npm run token` does, with `env` over the test's own. */
function tokenCommand(args: readonly string[], env: Record<string, string>) {
  return promisify(execFile)(process.execPath, ['infra/local/token.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
  });
}

describe('a token from `npm run token`', () => {
  it('is accepted by the gateway on the same PORT and state directory', async () => {
    const { stdout } = await tokenCommand(['--sub', uniqueSub(), '--scope', 'write:pets read:pets'], {
      PORT: String(gateway.port),
      LOCAL_STATE_DIR: gateway.stateDir,
    });
    const token = stdout.trim();

    const pet = { id: uniquePetId(), name: 'doggie', photoUrls: [] };
    const added = await call('POST', '/api/v3/pet', { token, json: pet });
    expect(added.status, added.text).toBe(200);
    const found = await call('GET', `/api/v3/pet/${pet.id}`, { token });
    expect(found.json).toEqual(pet);
  });
});

describe('`npm run -s token`, as the README runs it', () => {
  it("prints the token alone on stdout, npm's own lines kept off by -s, and names the stack on stderr", async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'token', '--', '--sub', uniqueSub(), '--scope', 'read:pets'],
      {
        cwd: repoRoot,
        env: { ...process.env, PORT: String(gateway.port), LOCAL_STATE_DIR: gateway.stateDir },
      },
    );
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(stderr).toContain(`the local stack at ${gateway.baseUrl} (PORT=${gateway.port})`);
    const found = await call('GET', `/api/v3/pet/${uniquePetId()}`, { token: stdout.trim() });
    expect(found.status, found.text).toBe(404);
  });
});

describe('`npm run token`', () => {
  it('exits 2 with the usage on stderr and nothing on stdout for arguments it does not take', async () => {
    const run = tokenCommand(['--sub', 'alice'], { LOCAL_STATE_DIR: gateway.stateDir });
    await expect(run).rejects.toMatchObject({
      code: 2,
      stdout: '',
      stderr: expect.stringContaining('Usage: npm run token'),
    });
  });

  it('signs with one key when processes race to create it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'token-race-'));
    try {
      const runs = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          tokenCommand(['--sub', `racer-${i}`, '--scope', 'read:pets'], {
            LOCAL_STATE_DIR: dir,
            PORT: '3000',
          }),
        ),
      );
      const jwks = JSON.parse(await readFile(join(dir, 'issuer', 'jwks.json'), 'utf8')) as JSONWebKeySet;
      expect(jwks.keys).toHaveLength(1);
      for (const run of runs) {
        await jwtVerify(run.stdout.trim(), createLocalJWKSet(jwks), {
          issuer: localIssuerUrl(3000),
          audience: LOCAL_AUDIENCE,
        });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
