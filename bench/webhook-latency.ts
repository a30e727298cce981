/**
 * `npm run bench:webhooks`: issue 46's webhook scenario standalone, at its own count (100 payers ×
 * 5 payments into one merchant; the measurement is bench/webhooks.ts). Prints the p50/p99 of
 * `transfer.received` after the payment's 200 and of `transfer.completed` after the money became
 * spendable, and whether every payment was told once. `npm run bench` runs the same scenario
 * smaller as a budget line.
 *
 * Modes (environment):
 * - WEBHOOK_BENCH_FAULTS=1: the receiver answers 500 to 30 % of requests and is shut for 10 s in
 *   the middle of the payments; the stack retries on the e2e suite's shortened schedule. Checks
 *   completeness (latency then measures the schedule, not the pipeline).
 * - WEBHOOK_BENCH_ISOLATION=1: another merchant, paid first by every payer, has an endpoint that
 *   never answers; the latency lines are the live merchant's, as the dead one's attempts hang.
 *
 * WEBHOOK_BENCH_CLIENTS, WEBHOOK_BENCH_PAYMENTS change the count. Exits 1 when an event is missing,
 * doubled or unverified, or a latency line is over budget.
 */
import { LIMITS } from './budgets.ts';
import { percentile } from './stats.ts';
import { measureWebhookLatency } from './webhooks.ts';

const WEBHOOK_BUDGET_MS = LIMITS.webhookP99Ms;
const FAULTS = process.env.WEBHOOK_BENCH_FAULTS === '1';
const ISOLATION = process.env.WEBHOOK_BENCH_ISOLATION === '1';
const run = await measureWebhookLatency({
  clients: Number(process.env.WEBHOOK_BENCH_CLIENTS ?? 100),
  paymentsEach: Number(process.env.WEBHOOK_BENCH_PAYMENTS ?? 5),
  faults: FAULTS,
  isolation: ISOLATION,
});

const problems = [...run.problems];
const latency = (name: string, values: readonly number[]) => {
  const p99 = percentile(values, 99);
  const within = p99 <= WEBHOOK_BUDGET_MS;
  if (!within && !FAULTS) problems.push(`${name}: p99 ${p99.toFixed(0)} ms is over the budget`);
  return `${name}: p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (budget ${WEBHOOK_BUDGET_MS} ms p99: ${FAULTS ? 'not judged with faults' : within ? 'within' : 'OVER'})`;
};
console.log(
  `${run.clients} payers × ${run.paymentsEach} payments into one merchant${FAULTS ? ', receiver failing 30 % and shut 10 s' : ''}${ISOLATION ? ', beside an endpoint that never answers' : ''}: ${run.paid} paid in ${(run.payingMs / 1000).toFixed(1)} s (${run.retried} retries of a 503), ${run.pending} through the clearing account`,
);
console.log(latency('transfer.received after the 200', run.receivedMs));
console.log(latency('transfer.completed after spendable', run.completedMs));
console.log(
  `every event told: ${run.problems.length === 0 ? 'yes' : 'NO'} (${run.receivedMs.length} received, ${run.completedMs.length} completed, all within ${(run.allToldMs / 1000).toFixed(1)} s of the first payment; ${run.failedOnPurpose} answered 500 on purpose${ISOLATION ? `; ${run.hung} attempts hanging at the dead endpoint` : ''})`,
);
const stage = (values: readonly number[]) =>
  `p50 ${percentile(values, 50).toFixed(0)}, p99 ${percentile(values, 99).toFixed(0)} ms`;
console.log(
  `where the time went (both types): fact to task stored ${stage(run.stages.derived)}; task to first attempt ${stage(run.stages.dispatched)}; attempt to receiver ${stage(run.stages.received)}`,
);
for (const problem of problems) console.log(`  ${problem}`);
process.exitCode = problems.length === 0 ? 0 : 1;
