import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/*
 * `npm run bench:webhooks` starts `npm start` itself, so its own process has none of a stack's
 * environment. bench/webhooks.ts imports the tests' receiver; when that module imported the
 * dispatcher's handler, whose cold start reads WEBHOOKS_TABLE_NAME, the bench died before it began.
 */
describe('the webhooks benchmark', () => {
  it('loads without a stack’s environment, as npm run bench:webhooks starts it', async () => {
    const loaded = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', "await import('./bench/webhooks.ts'); console.log('loaded')"],
      { env: { PATH: process.env.PATH ?? '' }, cwd: process.cwd() },
    ).catch((error: { stderr?: string }) => ({ stdout: '', stderr: error.stderr ?? String(error) }));
    expect(loaded.stderr.split('\n').find((line) => line.startsWith('Error')) ?? '').toBe('');
    expect(loaded.stdout.trim()).toBe('loaded');
  });
});
