import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiJson } from '#shared/openapi.generated.js';

const run = promisify(execFile);
const bin = (name: string) => join('node_modules', '.bin', name);
let dir: string;
let documentFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  documentFile = join(dir, 'openapi.json');
  await writeFile(documentFile, openApiJson);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The command's output whether it exits 0 or not. */
async function output(file: string, args: readonly string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(file, args, { env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('the OpenAPI document as the tools people point at an API read it', () => {
  it('passes Redocly CLI (recommended rules) with no error and no warning', async () => {
    const result = await output(bin('redocly'), [
      'lint',
      documentFile,
      '--config',
      'redocly.yaml',
      '--format=json',
    ]);
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: unknown[];
    };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('passes Spectral (spectral:oas) with no result of any severity, hints included', async () => {
    const result = await output(bin('spectral'), [
      'lint',
      documentFile,
      '--ruleset',
      '.spectral.yaml',
      '--fail-severity=hint',
      '--format=json',
    ]);
    expect(result.stdout.slice(0, result.stdout.lastIndexOf(']') + 1)).toBe('[]');
    expect(result.code, result.stdout).toBe(0);
  });
});
