import { describe, expect, it } from 'vitest';
import { formatMinor, numberSource, parseAmount } from '#shared/wallet/money.ts';

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
    ['1000000.01', 'too-large'],
    ['"5"', 'not-a-number'],
    ['', 'not-a-number'],
    ['NaN', 'not-a-number'],
  ])('refuses %s as %s', (source, problem) => {
    expect(parseAmount(source, usd, max)).toEqual({ problem });
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
});
