import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { call, gateway, uniquePetId } from './http.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('a token from `npm run token`', () => {
  it('is accepted by the gateway on the same PORT and state directory', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['infra/local/token.ts', '--sub', uniqueSub(), '--scope', 'write:pets read:pets'],
      {
        cwd: repoRoot,
        env: { ...process.env, PORT: String(gateway.port), LOCAL_STATE_DIR: gateway.stateDir },
      },
    );
    const token = stdout.trim();

    const pet = { id: uniquePetId(), name: 'doggie', photoUrls: [] };
    const added = await call('POST', '/api/v3/pet', { token, json: pet });
    expect(added.status, added.text).toBe(200);
    const found = await call('GET', `/api/v3/pet/${pet.id}`, { token });
    expect(found.json).toEqual(pet);
  });
});
