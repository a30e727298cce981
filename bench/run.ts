/**
 * `npm run bench`: builds the production bundles (with the esbuild options CDK uses) and a
 * baseline, measures bundle size, cold init, warm overhead, round trips and end-to-end latency
 * (against like-for-like floors: see BENCHMARKS.md), judges every budget of `budgets.ts` on its
 * interval, prints one table with a verdict line per budget, and writes both into BENCHMARKS.md.
 * A check whose interval straddles its limit is measured again, a bounded number of times, before
 * it is called inconclusive. Exits 0 when every budget passed, 1 when one failed, 2 when one is
 * still inconclusive (rerun). `--quick` runs fewer samples and no extra ones (for trying the
 * harness, not for the record); `--no-write` leaves BENCHMARKS.md alone; `--profile` writes CPU
 * profiles of the warm runs and of the gateway into .bench/profiles (open them in Chrome DevTools).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { loadOrCreateLocalKeys, signLocalToken } from '#infra/local/issuer.ts';
import { startJwksServer } from '#infra/local/jwks-server.ts';
import { exitCode, LIMITS, type Verdict, verdictLines, verdicts } from './budgets.ts';
import { type Bundle, buildBundles } from './build.ts';
import { measureColdInit } from './cold.ts';
import { costModel } from './cost-model.ts';
import { measureEndToEnd } from './e2e.ts';
import { END_TO_END_ROUTES, WITHOUT_END_TO_END } from './e2e-routes.ts';
import { HOT_SCENARIO, measureHotWallet } from './hot-wallet.ts';
import { ALL_SCOPES } from './lambda-events.ts';
import { coldStartEstimates, resultsTable, writeBenchmarksMd } from './report.ts';
import { describeMachine, type Results, type Settings } from './results.ts';
import { CONFIDENCE, undecidedAgainst } from './stats.ts';
import { ALL_TARGETS, BASELINE, lambdaNodeOptions, targetEnvironment } from './targets.ts';
import { measureWarmOverhead } from './warm.ts';
import { measureWebhookLatency } from './webhooks.ts';

/** Median cold start of a hello-world nodejs24.x arm64 zip function on Lambda (public daily lambda-perf benchmark). */
const LAMBDA_HELLO_WORLD_COLD_START_MS = 122;
/** How much slower Lambda runs the same init code than this machine: the range the estimate spans. */
const LAMBDA_CPU_FACTORS = [1, 1.5] as const;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = join(ROOT, '.bench');

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean' }, 'no-write': { type: 'boolean' }, profile: { type: 'boolean' } },
  strict: true,
});
const settings: Settings = flags.quick
  ? {
      coldRounds: 5,
      warmBatches: 10,
      warmBatchSize: 200,
      warmPasses: 1,
      concurrency: 1,
      warmUpRequests: 120,
      e2eRounds: 4,
      e2eBatchRequests: 50,
      hotRounds: 1,
      extraSets: 0,
      webhookClients: 10,
      webhookPayments: 5,
    }
  : {
      coldRounds: 31,
      // The warm verdict is over processes (bench/warm.ts): more of them, fewer batches each.
      warmBatches: 24,
      warmBatchSize: 200,
      warmPasses: 5,
      // One request at a time, as one Lambda environment serves them: on 2 shared cores more
      // would turn CPU into queueing behind DynamoDB Local, which no AWS caller waits in, and
      // made the verdict a coin toss (BENCHMARKS.md, "How it measures").
      concurrency: 1,
      warmUpRequests: 1000,
      e2eRounds: 20,
      e2eBatchRequests: 100,
      hotRounds: 5,
      extraSets: 2,
      // A fifth of issue 46's 100 × 5 (`npm run bench:webhooks`): under a minute with the stack's start.
      webhookClients: 20,
      webhookPayments: 5,
    };

const profileOptions = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(OUT_DIR, 'profiles')}`] : [];

const progress = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const startedAt = new Date();
const machine = describeMachine();
const memoryMb = ProjectFunction.MEMORY_MB;

progress(`building ${ALL_TARGETS.length} bundles with infra/bundling.ts`);
const bundles = await buildBundles(ALL_TARGETS, join(OUT_DIR, 'bundles'));
const baseline = bundles.find((b) => b.target === BASELINE) as Bundle;
const functions = bundles.filter((b) => b.target.kind === 'function');

// Every route is measured end to end or has a stated reason not to be (bench/e2e.ts).
const routeFunctions = functions.filter((b) => b.target.route !== undefined).map((b) => b.target.name);
const unplaced = routeFunctions.filter(
  (name) => END_TO_END_ROUTES.includes(name) === (WITHOUT_END_TO_END[name] !== undefined),
);
if (unplaced.length > 0)
  throw new Error(
    `Put each route in END_TO_END_ROUTES or WITHOUT_END_TO_END (bench/e2e-routes.ts), not both: ${unplaced.join(', ')}`,
  );

const stateDir = join(OUT_DIR, 'issuer');
await mkdir(stateDir, { recursive: true, mode: 0o700 });
const keys = await loadOrCreateLocalKeys(stateDir);
const jwks = await startJwksServer(keys.publicJwks);
const envOf = (bundle: Bundle) => targetEnvironment(bundle.target, jwks, memoryMb);

let results: Results;
try {
  progress(`cold init: fresh processes per bundle, in rotating rounds`);
  // The S3 and KMS functions' init is compared with the client baselines', as their bundles are.
  const cold = await measureColdInit(bundles, baseline, envOf, {
    rounds: settings.coldRounds,
    extraSets: settings.extraSets,
    undecided: undecidedAgainst(LIMITS.coldInitRatio, 'max'),
    onProgress: progress,
  });
  if (jwks.hits() > 0) throw new Error(`The JWKS was fetched ${jwks.hits()} times during cold init`);

  progress(
    `warm overhead: ${settings.warmPasses} processes of ${settings.warmBatches} batches of ${settings.warmBatchSize} invocations per function`,
  );
  const caller = { sub: 'bench-caller' };
  const token = await signLocalToken({ ...caller, scope: ALL_SCOPES, port: jwks.port, stateDir });
  const publicJwk = JSON.stringify(keys.publicJwks.keys[0]);
  const warm = await measureWarmOverhead(
    functions,
    baseline,
    envOf,
    { ...caller, token, publicJwk },
    {
      batches: settings.warmBatches,
      batchSize: settings.warmBatchSize,
      passes: settings.warmPasses,
      extraSets: settings.extraSets,
      undecided: undecidedAgainst(LIMITS.warmOverheadUs, 'max'),
      nodeOptions: [...lambdaNodeOptions(memoryMb), ...profileOptions],
      onProgress: progress,
    },
  );
  // Each warm authorizer process fetches the keys for its first token and verifies every later one
  // from its cache.
  const authorizerProcesses = warm.find((w) => w.name === 'authorizer')?.processes;
  if (jwks.hits() !== authorizerProcesses)
    throw new Error(`The warm authorizers fetched the JWKS ${jwks.hits()} times, not once per process`);

  progress(
    `end to end: ${settings.e2eRounds} rounds of ${settings.e2eBatchRequests} requests per route and side at concurrency ${settings.concurrency}`,
  );
  const endToEnd = await measureEndToEnd(
    routeFunctions.filter((name) => END_TO_END_ROUTES.includes(name)),
    {
      concurrency: settings.concurrency,
      batchRequests: settings.e2eBatchRequests,
      warmUpRequests: settings.warmUpRequests,
      rounds: settings.e2eRounds,
      extraSets: settings.extraSets,
      undecided: undecidedAgainst(LIMITS.endToEndP50Ratio, 'max'),
      batchTimeoutMs: 30_000,
      onProgress: progress,
      gatewayNodeOptions: profileOptions,
    },
  );
  progress(
    `hot wallet: ${settings.hotRounds} rounds of ${HOT_SCENARIO.clients} clients × ${HOT_SCENARIO.paymentsEach} payments, into one wallet and spread`,
  );
  const hotWallet = await measureHotWallet({
    rounds: settings.hotRounds,
    extraSets: settings.extraSets,
    undecided: {
      throughput: undecidedAgainst(LIMITS.hotThroughputRatio, 'min'),
      p99: undecidedAgainst(LIMITS.hotP99Ratio, 'max'),
    },
    onProgress: progress,
  });
  progress(
    `webhooks: ${settings.webhookClients} payers × ${settings.webhookPayments} payments into one merchant`,
  );
  const webhooks = await measureWebhookLatency({
    clients: settings.webhookClients,
    paymentsEach: settings.webhookPayments,
    onProgress: progress,
  });
  machine.loadAtEnd = loadavg()[0] ?? 0;
  results = {
    bundles,
    cold,
    warm,
    endToEnd,
    hotWallet,
    webhooks,
    settings,
    machine,
    startedAt,
    durationS: (Date.now() - startedAt.getTime()) / 1000,
  };
} finally {
  await jwks.close();
}

const list = verdicts(results);
process.stdout.write(`\n${resultsTable(results, list)}\n\n${verdictLines(list)}\n`);
await writeFile(join(OUT_DIR, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);

if (!flags['no-write']) {
  const cdkContext = JSON.parse(await readFile(join(ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const cacheTtl = Number(cdkContext.context?.['auth:cacheTtlSeconds'] ?? 300);
  await writeBenchmarksMd(join(ROOT, 'BENCHMARKS.md'), generatedSection(results, list, cacheTtl));
  progress('BENCHMARKS.md updated');
}
process.exitCode = exitCode(list);

/** The part of BENCHMARKS.md a run rewrites. */
function generatedSection(run: Results, list: readonly Verdict[], authorizerCacheTtlSeconds: number): string {
  const m = run.machine;
  const s = run.settings;
  const confidence = `${CONFIDENCE * 100} %`;
  return [
    `Last run ${run.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (${Math.round(run.durationS)} s) with \`npm run bench\`${flags.quick ? ' --quick' : ''}, on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node.js ${m.node}, Linux ${m.kernel}; 1-minute load average ${m.loadAtStart.toFixed(1)} at the start, ${(m.loadAtEnd ?? 0).toFixed(1)} at the end.`,
    '',
    `Every interval is the ${confidence} bootstrap interval of the median; a check whose interval straddled its limit got up to ${s.extraSets} more sets of samples. Cold init: ${s.coldRounds} rounds of fresh processes, the ratio per round of the import's CPU time to the baseline's. Warm: ${s.warmPasses} processes of ${s.warmBatches} batches of ${s.warmBatchSize} invocations, each batch minus the baseline's next to it (which writes the same request line), the interval over the processes' medians, in node with Lambda's heap limits at ${memoryMb} MB (\`${lambdaNodeOptions(memoryMb).join(' ')}\`). End to end: ${s.e2eRounds} rounds of ${s.e2eBatchRequests} requests per route and side at concurrency ${s.concurrency} after ${s.warmUpRequests} to warm up, through the local gateway and DynamoDB Local, against the floor (a bare node:http server making the route's DynamoDB calls with the same client, driven by the same workers); the ratio per round of the two p50s.`,
    '',
    `Hot wallet: after one unmeasured round to warm up, ${s.hotRounds} rounds (and up to ${s.extraSets} more sets) of ${HOT_SCENARIO.clients} clients each making ${HOT_SCENARIO.paymentsEach} payments of 1.00 into one fresh wallet, and the same spread over ${HOT_SCENARIO.clients} fresh recipients, in alternating order, through \`npm start\` with its DynamoDB-like conflict mode: ${run.hotWallet.hotPaymentsPerSecond.toFixed(0)} payments/s into one wallet against ${run.hotWallet.spreadPaymentsPerSecond.toFixed(0)} spread (means over the rounds); the ratios per round judged.`,
    '',
    `Webhooks: ${run.webhooks.clients} payers each making ${run.webhooks.paymentsEach} payments of 0.01 into one merchant with an endpoint on loopback (verifying each delivery with \`standardwebhooks\`), through \`npm start\` with its conflict mode: ${run.webhooks.paid} paid in ${(run.webhooks.payingMs / 1000).toFixed(1)} s, ${run.webhooks.pending} through the clearing account, every event at the endpoint within ${(run.webhooks.allToldMs / 1000).toFixed(1)} s of the first payment. p99 over the run's events (no interval: one run of the scenario), as for the hot wallet's time to the available balance; \`npm run bench:webhooks\` runs the issue's 100 × 5, and its fault and isolation modes.`,
    '',
    `Not measured end to end (bundle, cold init, warm overhead and round trips as every function): ${Object.entries(
      WITHOUT_END_TO_END,
    )
      .map(([name, why]) => `${name} (${why})`)
      .join('; ')}.`,
    '',
    resultsTable(run, list),
    '',
    '```text',
    verdictLines(list),
    '```',
    '',
    '### Cost per million requests (AWS, us-east-1)',
    '',
    costModel(run, memoryMb, authorizerCacheTtlSeconds),
    '',
    '### Estimated cold starts on Lambda',
    '',
    `Published median for a hello-world nodejs24.x arm64 zip: ${LAMBDA_HELLO_WORLD_COLD_START_MS} ms. Estimate = that + (import CPU time here − hello-world's here) × ${LAMBDA_CPU_FACTORS[0]}–${LAMBDA_CPU_FACTORS[1]} (Lambda's share of a Graviton core versus this machine's core).`,
    '',
    coldStartEstimates(run, LAMBDA_HELLO_WORLD_COLD_START_MS, LAMBDA_CPU_FACTORS),
  ].join('\n');
}
