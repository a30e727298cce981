import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { withOwnEnvironment } from '#infra/local/invoke.ts';

// The source mode imports every function into one process: each module must still see only its
// own variables while it loads (its configuration is read then), as its template gives them.

const dir = mkdtempSync(join(tmpdir(), 'in-process-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A module that exports the values of `names` as it saw them at load. */
async function importSeeing(
  names: readonly string[],
  own: Record<string, string>,
  all: Record<string, string>,
) {
  const file = join(dir, `${randomUUID()}.mjs`);
  writeFileSync(
    file,
    `export const seen = Object.fromEntries(${JSON.stringify(names)}.map((n) => [n, process.env[n]]));`,
  );
  const module = await withOwnEnvironment(own, all, () => import(pathToFileURL(file).href));
  return (module as { seen: Record<string, string | undefined> }).seen;
}

describe('a function module imported in-process', () => {
  it("sees its own variables at load, not another function's, and the shared environment is back after", async () => {
    const suffix = randomUUID().replaceAll('-', '').toUpperCase();
    const pets = `PETS_${suffix}`;
    const auth = `AUTH_${suffix}`;
    const all = { [pets]: 'pets-table', [auth]: 'https://issuer.example' };
    const seen = await importSeeing([pets, auth], { [pets]: 'pets-table' }, all);
    expect(seen).toEqual({ [pets]: 'pets-table', [auth]: undefined });
    expect(process.env[auth]).toBe('https://issuer.example');
    expect(process.env[pets]).toBe('pets-table');
  });

  it("leaves alone the variables the stack does not set (the developer's shell, the test runner's)", async () => {
    const outside = `OUTSIDE_${randomUUID().replaceAll('-', '').toUpperCase()}`;
    process.env[outside] = 'kept';
    const seen = await importSeeing([outside], {}, { OTHER: 'x' });
    expect(seen[outside]).toBe('kept');
  });
});
