import { describe, expect, it } from 'vitest';
import { CALLER_RATE_KEY_TRANSFORMATIONS, callerRateKey } from '#infra/caller-rate-key.ts';
import { CallerRateLimiter } from '#infra/local/caller-rate-limit.ts';
import { BEARER_TOKEN_PATTERN } from '#shared/auth/bearer.ts';

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

describe('the rate key: one bucket per token, however the Authorization header spells it', () => {
  const token = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJkYXZlIn0.c2ln';
  // Every spelling the authorizer accepts (any case of the scheme, RFC 9110 §11.1; one or more
  // spaces, RFC 6750 §2.1) is one credential.
  const spellings = ['Bearer', 'bearer', 'BEARER', 'bEaReR'].flatMap((scheme) =>
    [' ', '  ', '     '].map((spaces) => `${scheme}${spaces}${token}`),
  );

  it('is the same key for every spelling the authorizer accepts', () => {
    const bearer = new RegExp(BEARER_TOKEN_PATTERN);
    for (const spelling of spellings) expect(bearer.exec(spelling)?.[1]).toBe(token);
    expect(new Set(spellings.map(callerRateKey))).toEqual(new Set([`bearer ${token.toLowerCase()}`]));
  });

  it("applies AWS WAF's transformations as documented: ASCII lowercase, white space compressed", () => {
    expect(CALLER_RATE_KEY_TRANSFORMATIONS).toEqual(['COMPRESS_WHITE_SPACE', 'LOWERCASE']);
    expect(callerRateKey('Bearer\t \u00A0\f\v\r\nT')).toBe('bearer t');
    // WAF's LOWERCASE maps A-Z only.
    expect(callerRateKey('Bearer \u00C9')).toBe('bearer \u00C9');
  });

  it('counts 300 requests spread over the spellings against one limit of 300', () => {
    const limiter = new CallerRateLimiter({ limit: 300, windowSeconds: 60 });
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 300; i++) {
      expect(limiter.take(callerRateKey(spellings[i % spellings.length] as string), t0 + i)).toBeUndefined();
    }
    expect(limiter.take(callerRateKey(`bearer  ${token}`), t0 + 300)).toBe(60);
  });
});
