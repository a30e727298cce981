/**
 * A paired A/B of two builds of one function's warm path, for changes smaller than the noise of
 * `npm run bench` (on a shared host its warm figures move by ±50 % between runs):
 *
 *   node bench/warm-ab.ts build <function> <dir>           builds the working tree into <dir>
 *   node bench/warm-ab.ts compare <function> <dirA> <dirB> [runs]
 *
 * Build A, change the code, build B, compare. `warm-child.ts` loads both builds in one process and
 * times their batches alternately (B in the function's place, A in the baseline's), so every
 * batch pair shares the process and the moment, and B − A is read batch by batch. Runs alternate
 * which build takes which place. Two builds of the same tree read within ±0.1 µs here.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildBundles } from './build.ts';
import { runJsonChild } from './child.ts';
import { startJwksServer } from './jwks-server.ts';
import { median } from './stats.ts';
import { FUNCTIONS, lambdaNodeOptions, targetEnvironment } from './targets.ts';

const MEMORY_MB = 1024;
const [command, name, dirA, dirB, runsArg] = process.argv.slice(2);
const target = FUNCTIONS.find((candidate) => candidate.name === name);
if (!target || target.name === 'authorizer' || (command !== 'build' && command !== 'compare')) {
  throw new Error(
    'usage: node bench/warm-ab.ts build <function> <dir> | compare <function> <dirA> <dirB> [runs] (not the authorizer)',
  );
}

if (command === 'build') {
  if (!dirA) throw new Error('build needs a directory');
  await buildBundles([target], dirA);
} else {
  if (!dirA || !dirB) throw new Error('compare needs two build directories');
  const instrumented = (dir: string) =>
    pathToFileURL(join(dir, 'instrumented', target.name, 'index.mjs')).href;
  // No token is verified on these routes; the environment names an issuer all the same.
  const jwks = await startJwksServer({ keys: [] });
  const differences: number[] = [];
  try {
    for (let run = 0; run < Number(runsArg ?? 4); run++) {
      const swapped = run % 2 === 1;
      const [inFunctionPlace, inBaselinePlace] = swapped ? [dirA, dirB] : [dirB, dirA];
      const { result } = await runJsonChild<{ functionUs: number[]; baselineUs: number[] }>(
        'warm-child.ts',
        [target.name, instrumented(inFunctionPlace), instrumented(inBaselinePlace), '40', '200'],
        { ...targetEnvironment(target, jwks, MEMORY_MB), BENCH_SUB: 'bench-caller', BENCH_TOKEN: 'unused' },
        { nodeOptions: lambdaNodeOptions(MEMORY_MB) },
      );
      const sign = swapped ? -1 : 1;
      const difference = median(
        result.functionUs.map((us, i) => sign * (us - (result.baselineUs[i] ?? Number.NaN))),
      );
      differences.push(difference);
      console.log(`run ${run + 1}: B − A = ${difference.toFixed(2)} µs per invocation`);
    }
  } finally {
    await jwks.close();
  }
  console.log(
    `${target.name}: B − A = ${median(differences).toFixed(2)} µs (median of ${differences.length} runs: ${differences.map((d) => d.toFixed(2)).join(', ')})`,
  );
}
