import { describe, expect, it } from 'vitest';
import {
  MAX_RETRY_DELAY_MS,
  nextDelayMs,
  parseRetrySchedule,
  retryScheduleFrom,
} from '#shared/webhooks/model/retry-schedule.ts';

// The Standard Webhooks 1.0 schedule, written out here rather than read from the code under test.
const SPEC_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600];

describe('the webhook retry schedule', () => {
  it('waits the spec delay before each next attempt when the jitter is centred', () => {
    for (let failed = 1; failed < SPEC_SECONDS.length; failed++) {
      expect(nextDelayMs(failed, { random: () => 0.5 })).toBe((SPEC_SECONDS[failed] as number) * 1000);
    }
  });

  it('gives up after the tenth attempt', () => {
    expect(nextDelayMs(SPEC_SECONDS.length, { random: () => 0.5 })).toBeNull();
  });

  it('spreads each delay by at most 20 % either way', () => {
    expect(nextDelayMs(2, { random: () => 0 })).toBe(300_000 * 0.8);
    expect(nextDelayMs(2, { random: () => 0.999999 })).toBeCloseTo(300_000 * 1.2, -1);
  });

  it('never retries sooner than Retry-After asked, nor later than a day', () => {
    expect(nextDelayMs(1, { random: () => 0.5, retryAfterMs: 60_000 })).toBe(60_000);
    expect(nextDelayMs(1, { random: () => 0.5, retryAfterMs: 10 * MAX_RETRY_DELAY_MS })).toBe(
      MAX_RETRY_DELAY_MS,
    );
    expect(nextDelayMs(3, { random: () => 0.5, retryAfterMs: 1000 })).toBe(1_800_000);
  });

  it('refuses an attempt number that is not a positive integer', () => {
    expect(() => nextDelayMs(0)).toThrow(RangeError);
    expect(() => nextDelayMs(1.5)).toThrow(RangeError);
  });

  it('takes WEBHOOK_RETRY_SCHEDULE in seconds, decimals included, so tests run the schedule in seconds', () => {
    const schedule = retryScheduleFrom({ WEBHOOK_RETRY_SCHEDULE: '0, 0.2,1' });
    expect(schedule).toEqual([0, 0.2, 1]);
    expect(nextDelayMs(1, { schedule, random: () => 0.5 })).toBe(200);
    expect(nextDelayMs(3, { schedule, random: () => 0.5 })).toBeNull();
    expect(retryScheduleFrom({})).toEqual(SPEC_SECONDS);
  });

  it.each(['', 'a', '1,,2', '-1', '1e3', '90000', Array(21).fill('1').join(',')])(
    'refuses the schedule %j at start',
    (raw) => {
      expect(() => parseRetrySchedule(raw)).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    },
  );
});
