import fc from 'fast-check';
import { inject } from 'vitest';

// Runs before each test file is imported, so handler modules read this at their "cold start".
// The `unit` project has no global setup, hence no DynamoDB Local and nothing to inject.
Object.assign(process.env, inject('env') ?? {});

// The functions write their log and metric lines to stdout, as on Lambda. Here they go through
// console, so that vitest shows them only for the tests that fail (`silent: 'passed-only'`), and
// `linesWrittenBy` still reads them at stdout. Their metrics stay on, at the default level: this
// undoes the global setup's silencing of the in-process gateway.
Object.assign(process.env, { METRICS_DISABLED: 'false' });
delete process.env.LOG_LEVEL;
process.stdout.write = ((chunk: string | Uint8Array) => {
  console.log(String(chunk).replace(/\n$/, ''));
  return true;
}) as typeof process.stdout.write;

// Property tests draw new inputs on every run, which is how they find what examples miss; CI pins
// the seed (FC_SEED in .ci/run) so that a red build is reproducible and a green one stays green.
// A failure prints its seed: `FC_SEED=<seed> npm test` replays it.
if (process.env.FC_SEED) fc.configureGlobal({ seed: Number(process.env.FC_SEED) });
