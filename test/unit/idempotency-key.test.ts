import fc from 'fast-check';
import { parseItem } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { idempotencyKeyOf } from '#shared/http/idempotency-key.ts';

/** Our verdict: the key, or `undefined` when refused. */
function ours(value: string): string | undefined {
  try {
    return idempotencyKeyOf([value]);
  } catch {
    return undefined;
  }
}

/**
 * A maintained RFC 8941/9651 parser's reading of a quoted value: the String it holds, when the
 * value is exactly one String without parameters whose text is a key (1–255 visible ASCII).
 */
function theLibrarys(value: string): string | undefined {
  try {
    const [item, parameters] = parseItem(value);
    return typeof item === 'string' && parameters.size === 0 && /^[!-~]{1,255}$/.test(item)
      ? item
      : undefined;
  } catch {
    return undefined;
  }
}

describe('the Idempotency-Key header: one RFC 8941 String (or bare key), sent once', () => {
  it('reads a quoted key exactly as an RFC 8941 parser does', () => {
    // Few characters, so quotes, escapes, commas and parameters meet often.
    const text = fc.string({
      unit: fc.constantFrom('"', '\\', 'a', 'B', '1', ' ', ',', ';', '=', '-'),
      maxLength: 12,
    });
    fc.assert(
      fc.property(text, (inner) => {
        const value = `"${inner}`;
        expect(ours(value), value).toBe(theLibrarys(value));
      }),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 300 }), (inner) => {
        const value = `"${inner}"`;
        expect(ours(value), value).toBe(theLibrarys(value));
      }),
    );
  });

  it.each([
    ['a quote inside an unescaped String', '"a"b"'],
    ['a lone quote', '"'],
    ['an unterminated String', '"abc'],
    ['an escape other than \\" and \\\\', '"a\\x"'],
    ['an empty String', '""'],
    ['two keys combined, bare', 'K-shared, K-new-1'],
    ['two keys combined, quoted', '"K-shared", "K-new-1"'],
    ['two keys combined without a space', 'K-shared,K-new-1'],
    ['a String with parameters', '"K";a=1'],
    ['a bare key with a quote', 'a"b'],
    ['a space', 'a b'],
    ['256 characters', 'k'.repeat(256)],
  ])('refuses %s with 400 invalid-parameter', (_label, value) => {
    expect(() => idempotencyKeyOf([value])).toThrow(/Idempotency-Key/);
  });

  it.each([
    ['a bare key', 'b5e0c8f2-transfer-42', 'b5e0c8f2-transfer-42'],
    ['a String', '"b5e0c8f2-transfer-42"', 'b5e0c8f2-transfer-42'],
    ['a String with escapes', '"a\\"b\\\\c"', 'a"b\\c'],
    ['255 characters', 'k'.repeat(255), 'k'.repeat(255)],
  ])('takes %s', (_label, value, key) => {
    expect(idempotencyKeyOf([value])).toBe(key);
  });

  it('refuses a header sent twice, even with the same key', () => {
    expect(() => idempotencyKeyOf(['K-shared', 'K-new-1'])).toThrow(/once/);
    expect(() => idempotencyKeyOf(['K', 'K'])).toThrow(/once/);
    expect(idempotencyKeyOf([])).toBeUndefined();
  });
});
