/**
 * Money at the edge is an exact decimal in the JSON text; inside it is an integer count of minor
 * units (cents for USD). No float arithmetic on money anywhere: amounts are parsed from the JSON
 * source text and printed back as exact JSON number text.
 */

/** The one currency of a deployment. */
export interface Currency {
  /** ISO 4217 code. */
  readonly code: string;
  /** Digits after the decimal point; minor units per major unit = 10^decimals. */
  readonly decimals: number;
}

/** Why an amount was refused; each reads as the end of "amount …". */
export type AmountProblem = 'not-a-number' | 'not-positive' | 'too-precise' | 'too-large';

const JSON_NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses the JSON text of a number into minor units, exactly. `0.1` is 10 cents; `0.001`
 * (too precise for USD), `0.30000000000000004`, `-0` and `1e400` are refused. Trailing zeros and
 * exponents are fine when the value is exact (`1.500`, `1e2`).
 */
export function parseAmount(
  source: string,
  currency: Currency,
  maxMinor: number,
): { minor: number } | { problem: AmountProblem } {
  const match = JSON_NUMBER.exec(source.trim());
  if (!match) return { problem: 'not-a-number' };
  const [, sign = '', integerDigits = '', fractionDigits = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  // Beyond this the value is either 0 or astronomically large; no need to build the BigInt.
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 1_000) {
    return exponent > 0 && /[1-9]/.test(integerDigits + fractionDigits)
      ? { problem: 'too-large' }
      : { problem: 'not-positive' };
  }
  // value = digits × 10^(exponent − fraction length); minor = value × 10^decimals
  const digits = BigInt(integerDigits + fractionDigits);
  const shift = exponent - fractionDigits.length + currency.decimals;
  let minor: bigint;
  if (shift >= 0) {
    minor = digits * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    if (digits % divisor !== 0n) return { problem: 'too-precise' };
    minor = digits / divisor;
  }
  if (sign === '-' || minor === 0n) return { problem: 'not-positive' };
  if (minor > BigInt(maxMinor)) return { problem: 'too-large' };
  return { minor: Number(minor) };
}

/** The exact decimal text of an amount of minor units, e.g. 1234 → "12.34", 5 → "0.05". */
export function formatMinor(minor: number, currency: Currency): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`Not a whole number of minor units: ${minor}`);
  if (currency.decimals === 0) return String(minor);
  const digits = String(Math.abs(minor)).padStart(currency.decimals + 1, '0');
  const cut = digits.length - currency.decimals;
  return `${minor < 0 ? '-' : ''}${digits.slice(0, cut)}.${digits.slice(cut)}`;
}

declare global {
  interface JSON {
    /** ES2025 `JSON.rawJSON`: a value `JSON.stringify` writes as the given JSON text, verbatim. */
    rawJSON(text: string): unknown;
  }
}

/**
 * An amount as a JSON number that serialises to its exact decimal text ("12.30"), never through
 * a binary float.
 */
export function moneyJson(minor: number, currency: Currency): unknown {
  return JSON.rawJSON(formatMinor(minor, currency));
}

/**
 * The JSON source text of a top-level number property of a JSON object, as the client wrote it
 * (ES2025 JSON.parse source text access), or `undefined` when it is absent or not a number.
 */
export function numberSource(json: string, property: string): string | undefined {
  // The reviver also visits nested objects; keep each holder's source and pick the root's at the end.
  const sources = new Map<unknown, string>();
  const root: unknown = JSON.parse(json, function (this: unknown, key, value, context?: { source?: string }) {
    if (key === property && typeof value === 'number' && context?.source !== undefined) {
      sources.set(this, context.source);
    }
    return value;
  });
  return sources.get(root);
}
