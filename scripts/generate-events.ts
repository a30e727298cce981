/**
 * Writes the example events of `infra/local/invoke/events.ts` to `events/` (`npm run
 * generate:events`). The files are committed; test/unit/example-events.test.ts fails when they
 * and the route table drift apart (it compares the parsed JSON: the files are in Biome's format).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { eventFileText, exampleEvents } from '#infra/local/invoke/events.ts';

const dir = join(PROJECT_ROOT, 'events');
mkdirSync(dir, { recursive: true });
const events = exampleEvents();
for (const file of readdirSync(dir)) {
  if (file.endsWith('.json') && !(file in events)) rmSync(join(dir, file));
}
for (const [file, event] of Object.entries(events)) writeFileSync(join(dir, file), eventFileText(event));
// In the repository's format, so that `biome check` passes; the test compares parsed JSON.
execFileSync(join(PROJECT_ROOT, 'node_modules', '.bin', 'biome'), ['format', '--write', dir], {
  stdio: 'ignore',
});
console.log(`events/: ${Object.keys(events).join(', ')}`);
