import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '#shared/time.ts';

describe('isoTimestamp', () => {
  it.each([
    0, 1, 999, 1_000, -1, -1_001, 1_735_689_599_999, 1_735_689_600_000, 1_795_275_446_811,
    253_402_300_799_999,
  ])('writes %i as Date#toISOString does', (ms) => {
    expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });

  it('stays exact across second boundaries in either direction', () => {
    for (const ms of [1_795_275_446_999, 1_795_275_447_000, 1_795_275_446_998, 1_795_275_447_001]) {
      expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('defaults to now', () => {
    const before = Date.now();
    const stamp = Date.parse(isoTimestamp());
    expect(stamp).toBeGreaterThanOrEqual(before);
    expect(stamp).toBeLessThanOrEqual(Date.now());
  });
});
