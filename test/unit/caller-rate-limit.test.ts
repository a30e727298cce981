import { describe, expect, it } from 'vitest';
import { CallerRateLimiter } from '#infra/local/caller-rate-limit.ts';

describe('the local per-caller rate limit (the WAF rule mirrored)', () => {
  const t0 = 1_700_000_000_000;

  it('admits `limit` requests per trailing window, then says when the oldest leaves it', () => {
    const limiter = new CallerRateLimiter({ limit: 3, windowSeconds: 60 });
    expect(limiter.take('a', t0)).toBeUndefined();
    expect(limiter.take('a', t0 + 10_000)).toBeUndefined();
    expect(limiter.take('a', t0 + 20_000)).toBeUndefined();
    // The first request leaves the window at t0 + 60 s: 30 s from here.
    expect(limiter.take('a', t0 + 30_000)).toBe(30);
    expect(limiter.take('a', t0 + 59_500)).toBe(1);
    expect(limiter.take('a', t0 + 60_000)).toBeUndefined();
    // Refused requests were not counted: the next place frees when the second request leaves.
    expect(limiter.take('a', t0 + 60_001)).toBe(10);
  });

  it('counts each caller on its own', () => {
    const limiter = new CallerRateLimiter({ limit: 1, windowSeconds: 120 });
    expect(limiter.take('a', t0)).toBeUndefined();
    expect(limiter.take('b', t0)).toBeUndefined();
    expect(limiter.take('a', t0 + 1)).toBe(120);
  });

  it('keeps limiting a caller while ten thousand others come and go', () => {
    const limiter = new CallerRateLimiter({ limit: 1, windowSeconds: 60 });
    expect(limiter.take('flooder', t0)).toBeUndefined();
    for (let i = 0; i < 10_000; i++) limiter.take(`caller-${i}`, t0 + 61_000);
    expect(limiter.take('caller-9999', t0 + 61_001)).toBe(60);
  });
});
