import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '#shared/errors.ts';
import { PAGE_SIZE, pageLimitParameter } from '#shared/http/parameters.ts';

describe('the limit of every listing and search', () => {
  it('is PAGE_SIZE.fallback when absent, and any plain integer within PAGE_SIZE as written', () => {
    expect(pageLimitParameter(undefined)).toBe(PAGE_SIZE.fallback);
    expect(pageLimitParameter(String(PAGE_SIZE.min))).toBe(PAGE_SIZE.min);
    expect(pageLimitParameter(String(PAGE_SIZE.max))).toBe(PAGE_SIZE.max);
    expect(pageLimitParameter('37')).toBe(37);
  });

  it.each([
    ['0'],
    [String(PAGE_SIZE.max + 1)],
    ['-1'],
    ['1.5'],
    ['ten'],
    ['1e2'],
    ['0100'],
    ['010'],
    [''],
    [' 5'],
  ])('refuses %j, naming its bounds', (raw) => {
    expect(() => pageLimitParameter(raw)).toThrow(InvalidParameterError);
    expect(() => pageLimitParameter(raw)).toThrow(
      `limit must be an integer from ${PAGE_SIZE.min} to ${PAGE_SIZE.max}`,
    );
  });
});
