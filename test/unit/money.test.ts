import { describe, expect, it } from 'vitest';
import {
  formatMinor,
  MAX_AMOUNT_TEXT_LENGTH,
  numberSource,
  parseAmount,
} from '#shared/wallet/model/money.ts';

const usd = { code: 'USD', decimals: 2 };
const jpy = { code: 'JPY', decimals: 0 };
const max = 1_000_000_00;

describe('parseAmount reads an exact amount from the JSON text', () => {
  it.each([
    ['0.1', 10],
    ['0.01', 1],
    ['1', 100],
    ['12.34', 1234],
    ['1.500', 150],
    ['1e2', 10_000],
    ['1.5E1', 1_500],
    ['250e-2', 250],
    ['1000000', max],
    ['1000000.00', max],
  ])('accepts %s as %i minor units', (source, minor) => {
    expect(parseAmount(source, usd, max)).toEqual({ minor });
  });

  it.each([
    ['0.001', 'too-precise'],
    ['0.30000000000000004', 'too-precise'],
    ['0.10000000000000001', 'too-precise'],
    ['1.005', 'too-precise'],
    ['1e-3', 'too-precise'],
    ['-0', 'not-positive'],
    ['0', 'not-positive'],
    ['0.00', 'not-positive'],
    ['-5', 'not-positive'],
    ['0e400', 'not-positive'],
    ['1e400', 'too-large'],
    ['1e100000', 'too-large'],
    // Past the exponents it computes, as it says of their like within them.
    ['1e-1001', 'too-precise'],
    ['-1e-1001', 'too-precise'],
    ['-1e1001', 'not-positive'],
    ['0e-1001', 'not-positive'],
    ['1000000.01', 'too-large'],
    ['"5"', 'not-a-number'],
    ['', 'not-a-number'],
    ['NaN', 'not-a-number'],
  ])('refuses %s as %s', (source, problem) => {
    expect(parseAmount(source, usd, max)).toEqual({ problem });
  });

  it.each([
    ['1. followed by 2,000,000 zeros', `1.${'0'.repeat(2_000_000)}`],
    ['2,000,000 digits', '9'.repeat(2_000_000)],
    ['a long exponent', `1e${'0'.repeat(1_000_000)}1`],
    ['one character over the bound', `1.${'0'.repeat(MAX_AMOUNT_TEXT_LENGTH - 1)}`],
  ])('refuses %s as too-long, before parsing it', (_name, source) => {
    expect(parseAmount(source, usd, max)).toEqual({ problem: 'too-long' });
  });

  it('accepts trailing zeros up to the bound', () => {
    expect(parseAmount(`1.${'0'.repeat(MAX_AMOUNT_TEXT_LENGTH - 2)}`, usd, max)).toEqual({ minor: 100 });
  });

  it('follows the currency: no decimals at all for a zero-decimal currency', () => {
    expect(parseAmount('5', jpy, 1000)).toEqual({ minor: 5 });
    expect(parseAmount('5.5', jpy, 1000)).toEqual({ problem: 'too-precise' });
  });
});

describe('formatMinor prints exact decimals', () => {
  it.each([
    [1234, '12.34'],
    [5, '0.05'],
    [0, '0.00'],
    [100, '1.00'],
    [-250, '-2.50'],
    [9_007_199_254_740_991, '90071992547409.91'],
  ])('%i minor units → %s', (minor, text) => {
    expect(formatMinor(minor, usd)).toBe(text);
  });

  it('prints a bigint beyond 2^53 exactly', () => {
    expect(formatMinor(9_007_199_254_740_993n, usd)).toBe('90071992547409.93');
    expect(formatMinor(-5n, usd)).toBe('-0.05');
  });

  it('refuses fractional minor units', () => {
    expect(() => formatMinor(1.5, usd)).toThrow(RangeError);
  });
});

describe('numberSource finds the number text as the client wrote it', () => {
  it('returns the source of a top-level property, not the float', () => {
    expect(numberSource('{"toAddress":"x","amount":0.10000000000000001}', 'amount')).toBe(
      '0.10000000000000001',
    );
  });

  it('ignores a nested property of the same name', () => {
    expect(numberSource('{"amount":1.50,"x":{"amount":2}}', 'amount')).toBe('1.50');
    expect(numberSource('{"x":{"amount":2}}', 'amount')).toBeUndefined();
  });

  it('returns undefined for a string amount', () => {
    expect(numberSource('{"amount":"5"}', 'amount')).toBeUndefined();
  });

  it('takes the last of duplicate keys, as JSON.parse does', () => {
    expect(numberSource('{"amount":1,"amount":"2"}', 'amount')).toBeUndefined();
    expect(numberSource('{"amount":"1","amount":2.50}', 'amount')).toBe('2.50');
  });

  it('compares keys unescaped and is not fooled by keys or brackets inside strings', () => {
    expect(numberSource('{ "\\u0061mount" :\n 7.25 }', 'amount')).toBe('7.25');
    expect(numberSource('{"x":"\\"amount\\":1 }{","amount":3}', 'amount')).toBe('3');
    expect(numberSource('{"x":"\\\\","amount":4}', 'amount')).toBe('4');
  });
});
