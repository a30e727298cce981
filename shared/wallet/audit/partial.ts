import { randomUUID } from 'node:crypto';

/*
 * What the children of a segmented audit share, and how what each returns travels: as JSON text,
 * so that it is the same whether it crosses a worker thread (npm run wallet:audit -- --segments N)
 * or an S3 object between Lambdas (infra/constructs/ledger-audit.ts). JSON has no bigint, NaN or
 * Infinity; the audit holds all three (sums mod 2^64, balances, a date that is not a date), so they
 * travel tagged: a partial decodes to exactly what was encoded, or the verdicts could drift.
 */

/** What every child of one audit must agree on: drawn once, before the first child starts. */
export interface AuditPlan {
  /** The fingerprints' key, drawn for this audit only (shared/wallet/audit/fingerprints.ts). */
  readonly key: string;
  /** Epoch ms: items written before are settled, checked by fingerprint. */
  readonly horizon: number;
  /** Epoch ms: when the audit started (a credit in transit since long before is named stuck). */
  readonly startedAt: number;
  /** Scan segments, one child each. */
  readonly segments: number;
}

/**
 * How long before an audit's start an item must have been written to be settled. It should lie
 * before the scan starts by more than a movement can take to commit (a send's transaction ends
 * within the send route's `timeoutSeconds`, in shared/routes.ts, of its createdAt; a posting's
 * within one commit call, `worstCaseCallMs`, of its postedAt); a later one costs a second scan,
 * never a false break.
 */
export const SETTLING_MS = 5 * 60_000;

/** A plan for an audit starting now: a fresh key, the horizon SETTLING_MS ago unless given. */
export function planAudit(segments: number, settledBefore?: Date, key = randomUUID()): AuditPlan {
  const startedAt = Date.now();
  return {
    key,
    horizon: settledBefore?.getTime() ?? startedAt - SETTLING_MS,
    startedAt,
    segments,
  };
}

/** A value JSON cannot hold, tagged. */
type Tagged = { readonly $bigint: string } | { readonly $number: string };

/** JSON text of a value that may hold bigints and non-finite numbers. */
export const encodePartial = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown): unknown => {
    if (typeof v === 'bigint') return { $bigint: v.toString() } satisfies Tagged;
    if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) } satisfies Tagged;
    return v;
  });

/** The value of {@link encodePartial}'s text. */
export const decodePartial = <T>(text: string): T =>
  JSON.parse(text, (_, v: unknown): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if ('$bigint' in v && typeof v.$bigint === 'string') return BigInt(v.$bigint);
    if ('$number' in v && typeof v.$number === 'string') return Number(v.$number);
    return v;
  }) as T;

/** The bytes of a typed array of sums, as base64: a quarter of their decimal text. */
export const sumsToText = (sums: BigUint64Array): string =>
  Buffer.from(sums.buffer, sums.byteOffset, sums.byteLength).toString('base64');

/** Adds sums saved by {@link sumsToText} into `into`, element by element, mod 2^64. */
export function addSums(into: BigUint64Array, text: string): void {
  const bytes = Uint8Array.from(Buffer.from(text, 'base64'));
  const added = new BigUint64Array(bytes.buffer);
  if (added.length !== into.length) throw new Error(`${added.length} sums, not ${into.length}`);
  for (let i = 0; i < into.length; i++) into[i] = (into[i] as bigint) + (added[i] as bigint);
}

/** What the state machine hands every child and the reducer of one run (infra/constructs/ledger-audit.ts). */
export interface AuditRun {
  /** The execution's name: the run's partials lie under it. */
  readonly runId: string;
  readonly key: string;
  /** The execution's start, ISO 8601. */
  readonly startedAt: string;
  readonly segments: number;
}

/** Most segments a run may have: what `States.ArrayRange` builds at most. */
export const MAX_SEGMENTS = 1_000;

/**
 * The plan of a run, from the state machine's input: checked, as any input is, although only the
 * state machine sends it. The horizon is SETTLING_MS before the execution started.
 */
export function planOfRun(run: unknown): AuditPlan & { readonly runId: string } {
  const { runId, key, startedAt, segments } = (run ?? {}) as Partial<Record<keyof AuditRun, unknown>>;
  const started = typeof startedAt === 'string' ? Date.parse(startedAt) : Number.NaN;
  if (
    typeof runId !== 'string' ||
    !/^[\w-]{1,80}$/.test(runId) ||
    typeof key !== 'string' ||
    key.length < 16 ||
    key.length > 64 ||
    !Number.isFinite(started) ||
    !Number.isInteger(segments) ||
    (segments as number) < 1 ||
    (segments as number) > MAX_SEGMENTS
  ) {
    throw new TypeError('Not an audit run: { runId, key, startedAt, segments }');
  }
  return { runId, key, horizon: started - SETTLING_MS, startedAt: started, segments: segments as number };
}
