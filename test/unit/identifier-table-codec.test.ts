import { describe, expect, it } from 'vitest';
import { decodeNumbers, encodeNumbers } from '#shared/schemas/identifier-table-codec.ts';

describe('the identifier table codec', () => {
  it('reads back every number it wrote, at each digit boundary, with no separator', () => {
    const numbers = [0, 1, 31, 32, 33, 1023, 1024, 32_767, 32_768, 0x10ffff, Number.MAX_SAFE_INTEGER, 0];
    const text = encodeNumbers(numbers);
    expect(decodeNumbers(text)).toEqual(numbers);
    // One digit below 32, two below 1,024: small numbers take a character or two.
    expect(encodeNumbers([31])).toHaveLength(1);
    expect(encodeNumbers([1023])).toHaveLength(2);
  });

  it('refuses what it cannot write or read', () => {
    expect(() => encodeNumbers([-1])).toThrow();
    expect(() => encodeNumbers([1.5])).toThrow();
    expect(() => decodeNumbers('0 1')).toThrow(/Not a digit/);
    // A number whose last digit is missing.
    expect(() => decodeNumbers(encodeNumbers([1024]).slice(0, 1))).toThrow(/ends inside a number/);
  });
});
