import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultTokenRules } from '#infra/environment.ts';
import { LOCAL_AUDIENCE, loadOrCreateLocalKeys, localIssuerUrl } from '#infra/local/issuer.ts';
import { runTokenCommand } from '#infra/local/token-command.ts';

/**
 * `npm run token`, run in-process (`runTokenCommand`); test/e2e/token-command.test.ts runs the
 * real command, reading PORT and LOCAL_STATE_DIR, with processes racing for the issuer key.
 */

const tempDirs: string[] = [];
let stateDir: string;

beforeAll(async () => {
  stateDir = await tempDir();
});

afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('npm run token', () => {
  it('prints only a token, on one line, that the local public JWKS verifies', async () => {
    const run = await token(['--sub', 'alice', '--scope', 'read:pets write:pets']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);

    const { payload, protectedHeader } = await verify(run.stdout);
    expect(payload).toMatchObject({
      iss: localIssuerUrl(3000),
      aud: LOCAL_AUDIENCE,
      sub: 'alice',
      scope: 'read:pets write:pets',
    });
    expect(payload.exp).toBe((payload.iat ?? 0) + 3600);
    expect(protectedHeader).toMatchObject({
      alg: 'ES256',
      typ: 'at+jwt',
      kid: (await publicJwks()).keys[0]?.kid,
    });
  });

  it('names the gateway on its port as the issuer', async () => {
    const run = await token(['--sub', 'alice', '--scope', 'read:pets'], { port: 4000 });
    const { payload } = await verify(run.stdout, localIssuerUrl(4000));
    expect(payload.iss).toBe('http://127.0.0.1:4000');
  });

  it('takes a --ttl of the longest lifetime the authorizer accepts, and says why not one second more', async () => {
    const { payload } = await verify(
      (
        await token([
          '--sub',
          'a',
          '--scope',
          'read:pets',
          '--ttl',
          String(defaultTokenRules.maxTokenLifetimeSeconds),
        ])
      ).stdout,
    );
    expect(payload.exp).toBe((payload.iat ?? 0) + defaultTokenRules.maxTokenLifetimeSeconds);
    const longer = String(defaultTokenRules.maxTokenLifetimeSeconds + 1);
    const run = await token(['--sub', 'a', '--scope', 'read:pets', '--ttl', longer]);
    expect(run.stderr).toContain(`at most ${defaultTokenRules.maxTokenLifetimeSeconds} s`);
  });

  it('honours --ttl', async () => {
    const { payload } = await verify(
      (await token(['--sub', 'a', '--scope', 'read:pets', '--ttl', '120'])).stdout,
    );
    expect(payload.exp).toBe((payload.iat ?? 0) + 120);
  });

  it.each([[['--ttl', '-60']], [['--ttl=-60']]])(
    'prints an already-expired token for a negative ttl (%j)',
    async (ttl) => {
      const run = await token(['--sub', 'alice', '--scope', 'read:pets', ...ttl]);
      expect(run.code).toBe(0);
      await expect(verify(run.stdout)).rejects.toMatchObject({ code: 'ERR_JWT_EXPIRED' });
      const claims = decodeJwt(run.stdout.trim());
      expect(claims.exp).toBe((claims.iat ?? 0) - 60);
    },
  );

  it('prints a token without scope claim for --scope ""', async () => {
    const { payload } = await verify((await token(['--sub', 'alice', '--scope', ''])).stdout);
    expect(payload.scope).toBeUndefined();
  });

  it('signs every token with the one stored key, each with its own jti', async () => {
    const first = await token(['--sub', 'a', '--scope', 'read:pets']);
    const second = await token(['--sub', 'a', '--scope', 'read:pets']);
    expect(decodeProtectedHeader(second.stdout.trim()).kid).toBe(
      decodeProtectedHeader(first.stdout.trim()).kid,
    );
    expect(decodeJwt(second.stdout.trim()).jti).not.toBe(decodeJwt(first.stdout.trim()).jti);
    expect((await publicJwks()).keys).toHaveLength(1);
  });

  it('keeps the private key readable by its owner only', async () => {
    await token(['--sub', 'a', '--scope', '']);
    const mode = (await stat(join(stateDir, 'issuer', 'private-key.jwk.json'))).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it('warns on stderr of a scope the API does not know, and still prints the token', async () => {
    const run = await token(['--sub', 'a', '--scope', 'read:pet']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('unknown scope read:pet');
    await verify(run.stdout);
  });

  it.each([
    ['no --sub', ['--scope', 'read:pets']],
    ['an empty --sub', ['--sub', '', '--scope', 'read:pets']],
    ['no --scope', ['--sub', 'alice']],
    ['a --ttl that is not a number', ['--sub', 'alice', '--scope', 'read:pets', '--ttl', 'soon']],
    ['a fractional --ttl', ['--sub', 'alice', '--scope', 'read:pets', '--ttl', '1.5']],
    ['--ttl without value', ['--sub', 'alice', '--scope', 'read:pets', '--ttl']],
    [
      'a --ttl longer than the authorizer accepts',
      ['--sub', 'alice', '--scope', 'read:pets', '--ttl', '86401'],
    ],
    ['an unknown option', ['--sub', 'alice', '--scope', 'read:pets', '--aud', 'x']],
    ['a positional argument', ['--sub', 'alice', '--scope', 'read:pets', 'extra']],
  ])('exits 2 with the usage on stderr and nothing on stdout for %s', async (_label, args) => {
    const run = await token(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Usage: npm run token');
  });
});

describe('the local issuer key', () => {
  it('is the same for concurrent loads in one process', async () => {
    const dir = await tempDir();
    const loads = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateLocalKeys(dir)));
    expect(new Set(loads.map((keys) => keys.kid)).size).toBe(1);
    expect((await publicJwks(dir)).keys[0]?.kid).toBe(loads[0]?.kid);
    expect(await readdir(join(dir, 'issuer'))).toEqual(['jwks.json', 'private-key.jwk.json']);
  });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npm run token` in-process, for the issuer on `port` (3000 unless given) keeping its keys in `dir`. */
async function token(args: readonly string[], { port = 3000, dir = stateDir } = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runTokenCommand(
    args,
    {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
    },
    { port, stateDir: dir },
  );
  return { code, stdout, stderr };
}

async function publicJwks(dir = stateDir): Promise<JSONWebKeySet> {
  return JSON.parse(await readFile(join(dir, 'issuer', 'jwks.json'), 'utf8')) as JSONWebKeySet;
}

async function verify(stdout: string, issuer = localIssuerUrl(3000), jwks?: JSONWebKeySet) {
  return jwtVerify(stdout.trim(), createLocalJWKSet(jwks ?? (await publicJwks())), {
    issuer,
    audience: LOCAL_AUDIENCE,
    typ: 'at+jwt',
    algorithms: ['ES256'],
    requiredClaims: ['exp', 'iat', 'sub', 'jti'],
  });
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'token-command-test-'));
  tempDirs.push(dir);
  return dir;
}
