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

/**
 * The largest balance a wallet may hold and the largest amount any transfer or deposit may move,
 * in minor units: 10^15 (10 000 000 000 000.00 USD). Well inside 2^53 − 1 (about 9.007 × 10^15),
 * so a balance plus an amount (at most 2 × 10^15) is still an exact JavaScript number: money is
 * never rounded by the DocumentClient, by arithmetic, or by `JSON.parse` on the client side.
 */
export const MAX_BALANCE_MINOR = 1_000_000_000_000_000;

/**
 * The longest JSON text an amount may be written in. The largest valid amount needs 16 digits and
 * a decimal point (`10000000000000.00`); the rest leaves room for a sign, trailing zeros (`1.500`)
 * or an exponent (`1.5e3`). Checked before the text is parsed, so that `1.` followed by millions
 * of zeros costs nothing to refuse, not a BigInt of millions of digits.
 */
export const MAX_AMOUNT_TEXT_LENGTH = 32;

/** Why an amount was refused; each reads as the end of "amount …". */
export type AmountProblem = 'not-a-number' | 'not-positive' | 'too-precise' | 'too-large' | 'too-long';

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
  // On the text as given, before even trimming it: a long text costs nothing to refuse.
  if (source.length > MAX_AMOUNT_TEXT_LENGTH) return { problem: 'too-long' };
  const match = JSON_NUMBER.exec(source.trim());
  if (!match) return { problem: 'not-a-number' };
  const [, sign = '', integerDigits = '', fractionDigits = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  // Beyond this the value is 0, astronomically small or astronomically large: no need to build the
  // BigInt. Refused for what the checks below would say: precision first, then sign, then size.
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 1_000) {
    if (!/[1-9]/.test(integerDigits + fractionDigits)) return { problem: 'not-positive' };
    if (exponent < 0) return { problem: 'too-precise' };
    return sign === '-' ? { problem: 'not-positive' } : { problem: 'too-large' };
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

/**
 * The exact decimal text of an amount of minor units, e.g. 1234 → "12.34", 5 → "0.05". A bigint
 * prints exactly at any size (a balance stored beyond 2^53 before the cap existed).
 */
export function formatMinor(minor: number | bigint, currency: Currency): string {
  if (typeof minor === 'number' && !Number.isSafeInteger(minor)) {
    throw new RangeError(`Not a whole number of minor units: ${minor}`);
  }
  if (currency.decimals === 0) return String(minor);
  const negative = minor < 0;
  const digits = String(negative ? -minor : minor).padStart(currency.decimals + 1, '0');
  const cut = digits.length - currency.decimals;
  return `${negative ? '-' : ''}${digits.slice(0, cut)}.${digits.slice(cut)}`;
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
export function moneyJson(minor: number | bigint, currency: Currency): unknown {
  return JSON.rawJSON(formatMinor(minor, currency));
}

/**
 * The JSON source text of a top-level number property of a JSON object, as the client wrote it,
 * or `undefined` when it is absent or not a number: what `JSON.parse` hands its reviver as
 * `context.source` (ES2025), so duplicate keys and escaped keys read as `JSON.parse` reads them.
 * Meant for text that `JSON.parse` has accepted (docs/decisions/exact-amount-json-scan.md).
 */
export function numberSource(json: string, property: string): string | undefined {
  const sources = new Map<unknown, string>();
  const root: unknown = JSON.parse(json, function (this: unknown, key, value, context?: { source?: string }) {
    if (key === property && typeof value === 'number' && context?.source !== undefined) {
      sources.set(this, context.source);
    }
    return value;
  });
  return sources.get(root);
}
