/**
 * The budgets `npm run bench` holds every function to, and how a run's figures are judged against
 * them (BENCHMARKS.md, *Budgets and verdicts*). To add a budget, add a line to {@link BUDGETS}: its
 * limit, which side of it passes, and the checks it makes of a run's {@link Results}, one per
 * function or scenario, each a deterministic number or an {@link Estimate} with its interval.
 */
import type { Results } from './results.ts';
import { type Bound, type Estimate, judge, type Outcome, percentile } from './stats.ts';
import { bundleBaselineOf } from './targets.ts';

/** The limits, by budget. */
export const LIMITS = {
  bundleRatio: 1.25,
  /** A static-asset function's bundle, gzipped, over the gzip of the files it serves. */
  staticAssetsOverServedGzip: 1.1,
  /** Lambda's limit on a synchronous invocation's response payload. */
  lambdaResponseBytes: 6 * 1024 * 1024,
  coldInitRatio: 1.1,
  /** A tenth of Lambda's 1 ms billing step. */
  warmOverheadUs: 100,
  endToEndP50Ratio: 1.25,
  /** Payments into one wallet against the same payments spread over 100 recipients, in the same run. */
  hotThroughputRatio: 0.8,
  hotP99Ratio: 1.25,
  /** Touches of the hot wallet's item per payment: written, condition-checked or named in a failed transaction. */
  hotTouchesPerPayment: 0.1,
  /** From a payment's 200 to the merchant's available balance holding it, p99. */
  hotVisibleMs: 1_000,
  /**
   * Issue 46: `transfer.received` at the merchant's endpoint after the payment's 200, and
   * `transfer.completed` after the money became spendable, p99.
   */
  webhookP99Ms: 1_000,
} as const;

/** One thing a budget covers (a function, a route, a scenario) and what the run measured of it. */
export interface Check {
  readonly name: string;
  /** A deterministic figure (bytes, a count), or a median with its interval. */
  readonly value: number | Estimate;
  /** This check's own limit where it differs from the budget's (e.g. the floor's round trips). */
  readonly limit?: number;
  readonly note?: string;
}

export interface Budget {
  /** How the table refers to it. */
  readonly id: string;
  /** What its verdict line says, e.g. `Bundle ≤ 1.25 × baseline`. */
  readonly title: string;
  readonly limit: number;
  /** `max`: a check passes at or below the limit; `min`: at or above it. */
  readonly bound: Bound;
  /** How a value prints, e.g. `1.043×`. */
  readonly format: (value: number) => string;
  readonly checks: (results: Results) => readonly Check[];
}

const ratio = (digits: number) => (value: number) => `${value.toFixed(digits)}×`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

export const BUDGETS: readonly Budget[] = [
  {
    id: 'bundle',
    title: `Bundle ≤ ${LIMITS.bundleRatio} × baseline`,
    limit: LIMITS.bundleRatio,
    bound: 'max',
    format: ratio(3),
    checks: ({ bundles }) =>
      bundles
        .filter((b) => b.target.kind === 'function' && b.served === undefined)
        .map((b) => {
          const over = bundleBaselineOf(b.target);
          const base = bundles.find((x) => x.target.name === over)?.rawBytes ?? Number.NaN;
          return {
            name: b.target.name,
            value: b.rawBytes / base,
            ...(over === 'baseline' ? {} : { note: `over ${over}` }),
          };
        }),
  },
  {
    id: 'staticAssets',
    title: `Static-asset bundle, gzipped, ≤ ${LIMITS.staticAssetsOverServedGzip} × the gzip of the files it serves`,
    limit: LIMITS.staticAssetsOverServedGzip,
    bound: 'max',
    format: ratio(3),
    checks: ({ bundles }) =>
      bundles.flatMap((b) =>
        b.served
          ? [
              {
                name: b.target.name,
                value: b.gzipBytes / b.served.gzipBytes,
                note: b.target.staticAssets?.reason,
              },
            ]
          : [],
      ),
  },
  {
    id: 'responseLimit',
    title: `Largest static answer ≤ Lambda's ${mib(LIMITS.lambdaResponseBytes)} response limit`,
    limit: LIMITS.lambdaResponseBytes,
    bound: 'max',
    format: mib,
    checks: ({ bundles }) =>
      bundles.flatMap((b) =>
        b.served ? [{ name: b.target.name, value: b.served.largestResponseBytes }] : [],
      ),
  },
  {
    id: 'coldInit',
    title: `Cold init (CPU) ≤ ${LIMITS.coldInitRatio} × baseline`,
    limit: LIMITS.coldInitRatio,
    bound: 'max',
    format: ratio(3),
    checks: ({ cold, bundles }) =>
      cold.flatMap((c) => {
        const target = bundles.find((b) => b.target.name === c.name && b.target.kind === 'function')?.target;
        if (!target) return [];
        const over = bundleBaselineOf(target);
        return [{ name: c.name, value: c.ratio, ...(over === 'baseline' ? {} : { note: `over ${over}` }) }];
      }),
  },
  {
    id: 'initNetwork',
    title: 'Nothing fetched or connected during init',
    limit: 0,
    bound: 'max',
    format: (value) => `${value}`,
    checks: ({ cold }) => cold.map((c) => ({ name: c.name, value: c.fetches + c.connects })),
  },
  {
    id: 'warm',
    title: `Warm overhead ≤ ${LIMITS.warmOverheadUs} µs per invocation over the baseline with its request line (authorizer: over its signature check)`,
    limit: LIMITS.warmOverheadUs,
    bound: 'max',
    format: (value) => `${value.toFixed(1)} µs`,
    checks: ({ warm }) =>
      warm.map((w) => ({
        name: w.name,
        value: w.overhead,
        ...(w.over === 'baseline' ? {} : { note: `over ${w.over}` }),
      })),
  },
  {
    id: 'endToEnd',
    title: `End-to-end p50 ≤ ${LIMITS.endToEndP50Ratio} × floor (node:http + the same DynamoDB calls)`,
    limit: LIMITS.endToEndP50Ratio,
    bound: 'max',
    format: ratio(2),
    checks: ({ endToEnd }) => endToEnd.flatMap((r) => (r.ratio ? [{ name: r.name, value: r.ratio }] : [])),
  },
  {
    id: 'roundTrips',
    title: 'DynamoDB round trips per request = the floor’s',
    limit: 0,
    bound: 'max',
    format: (value) => `${value}`,
    checks: ({ warm }) => warm.map((w) => ({ name: w.name, value: w.roundTrips, limit: w.floorRoundTrips })),
  },
  {
    id: 'hotThroughput',
    title: `Into one wallet: throughput ≥ ${LIMITS.hotThroughputRatio} × the same payments spread over 100 recipients`,
    limit: LIMITS.hotThroughputRatio,
    bound: 'min',
    format: ratio(2),
    checks: ({ hotWallet }) => [{ name: 'hot-wallet', value: hotWallet.throughputRatio }],
  },
  {
    id: 'hotP99',
    title: `Into one wallet: payers' p99 ≤ ${LIMITS.hotP99Ratio} × the spread run's`,
    limit: LIMITS.hotP99Ratio,
    bound: 'max',
    format: ratio(2),
    checks: ({ hotWallet }) => [{ name: 'hot-wallet', value: hotWallet.p99Ratio }],
  },
  {
    id: 'hotAnswers',
    title: 'Into one wallet and spread: every payment answered 200 (no 503 from our own contention)',
    limit: 0,
    bound: 'max',
    format: (value) => `${value} not 200`,
    checks: ({ hotWallet }) => [
      { name: 'hot-wallet', value: hotWallet.failed, note: `of ${hotWallet.payments}` },
    ],
  },
  {
    id: 'hotTouches',
    title: `The hot wallet's item touched ≤ ${LIMITS.hotTouchesPerPayment} times per payment (counted at the proxy, worst round)`,
    limit: LIMITS.hotTouchesPerPayment,
    bound: 'max',
    format: (value) => value.toFixed(3),
    checks: ({ hotWallet }) => [
      {
        name: 'hot-wallet',
        value: hotWallet.touchesPerPayment,
        note: `${hotWallet.writesPerPayment.toFixed(3)} of them writes (postings), the rest failed transactions naming it`,
      },
    ],
  },
  {
    id: 'hotVisible',
    title: `A payment in the merchant's available balance ≤ ${LIMITS.hotVisibleMs} ms after its 200 (p99, locally)`,
    limit: LIMITS.hotVisibleMs,
    bound: 'max',
    format: (value) => `${value.toFixed(0)} ms`,
    checks: ({ hotWallet }) => [{ name: 'hot-wallet', value: hotWallet.visibleP99Ms }],
  },
  {
    id: 'webhookLatency',
    title: `Webhooks into one merchant: an event at its endpoint ≤ ${LIMITS.webhookP99Ms} ms after its fact (p99, locally; transfer.received after the payment's 200, transfer.completed after the money became spendable)`,
    limit: LIMITS.webhookP99Ms,
    bound: 'max',
    format: (value) => `${value.toFixed(0)} ms`,
    checks: ({ webhooks }) =>
      (
        [
          ['transfer.received', webhooks.receivedMs],
          ['transfer.completed', webhooks.completedMs],
        ] as const
      ).map(([name, values]) => ({
        name,
        value: percentile(values, 99),
        note: `p50 ${percentile(values, 50).toFixed(0)} ms, ${values.length} events`,
      })),
  },
  {
    id: 'webhookTold',
    title:
      'Webhooks into one merchant: every payment told once (one transfer.received, one transfer.completed, each verified, seq gap-free)',
    limit: 0,
    bound: 'max',
    format: (value) => `${value} problems`,
    checks: ({ webhooks }) => [
      {
        name: 'webhooks',
        value: webhooks.problems.length,
        note: [`of ${webhooks.paid} payments`, ...webhooks.problems].join('; '),
      },
    ],
  },
];

export interface JudgedCheck extends Check {
  readonly outcome: Outcome;
}

export interface Verdict {
  readonly budget: Budget;
  /** Fail when a check fails; otherwise inconclusive when one is; pass when every check passes. */
  readonly outcome: Outcome;
  readonly checks: readonly JudgedCheck[];
}

/** Every budget against a run. A budget with nothing to check fails: it has not been shown to hold. */
export function verdicts(results: Results, budgets: readonly Budget[] = BUDGETS): Verdict[] {
  return budgets.map((budget) => {
    const checks = budget.checks(results).map((check) => ({
      ...check,
      outcome: judge(check.value, check.limit ?? budget.limit, budget.bound),
    }));
    const some = (outcome: Outcome) => checks.some((c) => c.outcome === outcome);
    const outcome: Outcome =
      checks.length === 0 || some('fail') ? 'fail' : some('inconclusive') ? 'inconclusive' : 'pass';
    return { budget, outcome, checks };
  });
}

/** The exit code of a run: 0 when every budget passed, 1 when one failed, 2 when one is inconclusive. */
export function exitCode(list: readonly Verdict[]): number {
  if (list.some((v) => v.outcome === 'fail')) return 1;
  return list.some((v) => v.outcome === 'inconclusive') ? 2 : 0;
}

const MARKS: Readonly<Record<Outcome, string>> = { pass: '✓', fail: '✗', inconclusive: '?' };
const LABELS: Readonly<Record<Outcome, string>> = {
  pass: 'PASS',
  fail: 'FAIL',
  inconclusive: 'INCONCLUSIVE, rerun',
};

/** A check's value as printed, with its interval and, unless it passed, its mark. */
export function formatCheck(budget: Budget, check: JudgedCheck): string {
  const { value } = check;
  const shown =
    typeof value === 'number'
      ? budget.format(value)
      : `${budget.format(value.median)} (${budget.format(value.low)} to ${budget.format(value.high)})`;
  const limit = check.limit === undefined ? '' : ` (limit ${budget.format(check.limit)})`;
  return `${shown}${check.outcome === 'pass' ? '' : ` ${MARKS[check.outcome]}`}${limit}`;
}

/** The mark of `name` under the budget `id` (for the table), empty when the budget does not cover it. */
export function markOf(list: readonly Verdict[], id: string, name: string): string {
  const check = list.find((v) => v.budget.id === id)?.checks.find((c) => c.name === name);
  return check ? ` ${MARKS[check.outcome]}` : '';
}

/** The verdicts as lines: PASS, FAIL or INCONCLUSIVE, rerun, then each check. */
export function verdictLines(list: readonly Verdict[]): string {
  return list
    .map((v) => {
      const detail = v.checks.length
        ? v.checks
            .map((c) => `${c.name} ${formatCheck(v.budget, c)}${c.note ? ` (${c.note})` : ''}`)
            .join(', ')
        : 'nothing measured';
      return `${LABELS[v.outcome]}  ${v.budget.title}: ${detail}`;
    })
    .join('\n');
}
