/**
 * The per-caller rate limit the deployed stack enforces with an AWS WAF rate-based rule keyed on
 * the Authorization header (its key normalised by `#infra/caller-rate-key.ts`, which the caller
 * applies before {@link CallerRateLimiter.take}), mirrored locally: at most `limit` requests per caller in any trailing
 * window of `windowSeconds`, checked before the authorizer (WAF sits in front of API Gateway).
 * A request without the header is not counted, as WAF skips requests that lack the key; the
 * authorizer refuses those anyway. Unlike WAF (which also counts what it blocks and re-evaluates
 * every few seconds) only admitted requests count, so `Retry-After` is exact.
 */
import type { CallerRateLimit } from '#infra/environment.ts';

/** Callers tracked at most; AWS WAF, too, tracks a bounded number of keys per rule. */
const MAX_CALLERS = 10_000;

export class CallerRateLimiter {
  private readonly limit: number;
  private readonly windowMs: number;
  /** Per caller key, the times of its admitted requests in the window, oldest first (at most `limit`). */
  private readonly callers = new Map<string, number[]>();

  constructor(settings: CallerRateLimit) {
    this.limit = settings.limit;
    this.windowMs = settings.windowSeconds * 1000;
  }

  /**
   * Counts a request of `key` at `now`: `undefined` when it is admitted, otherwise the whole
   * seconds until the caller's window frees a place (at least 1).
   */
  take(key: string, now: number = Date.now()): number | undefined {
    const since = now - this.windowMs;
    let times = this.callers.get(key);
    if (times === undefined) {
      if (this.callers.size >= MAX_CALLERS) this.prune(since);
      times = [];
      this.callers.set(key, times);
    }
    while (times.length > 0 && (times[0] as number) <= since) times.shift();
    if (times.length >= this.limit) return Math.max(1, Math.ceil(((times[0] as number) - since) / 1000));
    times.push(now);
    return undefined;
  }

  /** Forgets callers with nothing in the window; past {@link MAX_CALLERS} still, the least recent. */
  private prune(since: number): void {
    for (const [key, times] of this.callers) {
      if ((times.at(-1) ?? 0) <= since) this.callers.delete(key);
    }
    for (const key of this.callers.keys()) {
      if (this.callers.size < MAX_CALLERS) break;
      this.callers.delete(key);
    }
  }
}
