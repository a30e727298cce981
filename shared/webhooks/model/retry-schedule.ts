/**
 * When to try a delivery again: the Standard Webhooks schedule (at once, 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 14 h, 20 h, 24 h), each delay spread by ±20 % so that the retries of many events
 * failing together do not arrive together, and never sooner than a `Retry-After` asked.
 */

/** Seconds before each attempt: the first at once. */
export const STANDARD_RETRY_SCHEDULE_SECONDS: readonly number[] = [
  0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
];

/** The spread of each delay: ±20 %. */
export const RETRY_JITTER = 0.2;

/** The longest any single delay may be, `Retry-After` included. */
export const MAX_RETRY_DELAY_MS = 24 * 60 * 60 * 1000;

/** Answers that ask the sender to slow down: their `Retry-After` is honoured (shared/webhooks/delivery/http-delivery.ts). */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

const MAX_SCHEDULE_LENGTH = 20;

export interface NextDelayOptions {
  /** Seconds before each attempt (`STANDARD_RETRY_SCHEDULE_SECONDS` unless overridden). */
  readonly schedule?: readonly number[];
  /** The failed attempt's `Retry-After`, in ms. */
  readonly retryAfterMs?: number | undefined;
  /** A number in [0, 1); `Math.random` unless a test gives a fixed one. */
  readonly random?: () => number;
}

/**
 * The delay before the next attempt, after attempt number `attempt` (1 = the first) failed; `null`
 * when the schedule has no attempt left (the event is given up for this endpoint; a replay can
 * still send it).
 */
export function nextDelayMs(attempt: number, options: NextDelayOptions = {}): number | null {
  const schedule = options.schedule ?? STANDARD_RETRY_SCHEDULE_SECONDS;
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  const seconds = schedule[attempt];
  if (seconds === undefined) return null;
  const random = options.random ?? Math.random;
  const factor = 1 - RETRY_JITTER + 2 * RETRY_JITTER * random();
  const jittered = Math.round(seconds * 1000 * factor);
  const asked = Math.min(Math.max(options.retryAfterMs ?? 0, 0), MAX_RETRY_DELAY_MS);
  return Math.min(Math.max(jittered, asked), MAX_RETRY_DELAY_MS);
}

/**
 * `WEBHOOK_RETRY_SCHEDULE`: comma-separated seconds (decimals allowed, so that tests run the whole
 * schedule in seconds), e.g. `0,0.2,0.5,1`. Throws on anything else, at cold start.
 */
export function parseRetrySchedule(raw: string): readonly number[] {
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > MAX_SCHEDULE_LENGTH) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE has ${parts.length} entries; at most ${MAX_SCHEDULE_LENGTH}`);
  }
  return parts.map((part) => {
    const seconds = Number(part);
    if (!/^\d+(\.\d+)?$/.test(part) || seconds * 1000 > MAX_RETRY_DELAY_MS) {
      throw new Error(
        `WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds of at most a day, got "${raw}"`,
      );
    }
    return seconds;
  });
}

/** The schedule a function runs with: the override when set, the standard one otherwise. */
export function retryScheduleFrom(env: Readonly<Record<string, string | undefined>>): readonly number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE;
  return raw === undefined || raw === '' ? STANDARD_RETRY_SCHEDULE_SECONDS : parseRetrySchedule(raw);
}
