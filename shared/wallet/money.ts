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
 * of zeros costs microseconds, not a BigInt of millions of digits.
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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
/**
 * A JSON number token where a value starts, cut one character past the longest amount text: the
 * text has been accepted by `JSON.parse`, so these characters are the number's, and a longer
 * number is refused by {@link parseAmount} without being read whole.
 */
const NUMBER_TOKEN = new RegExp(`-?\\d[\\d.eE+-]{0,${MAX_AMOUNT_TEXT_LENGTH}}`, 'y');
const WHITESPACE = /[ \t\n\r]*/y;
/** What the scan stops at: a string's quote, or a bracket that changes the depth. */
const STRUCTURAL = /["{}[\]]/g;

/** The index just past the whitespace (JSON's four characters) that starts at `from`. */
function skipWhitespace(text: string, from: number): number {
  WHITESPACE.lastIndex = from;
  WHITESPACE.test(text);
  return WHITESPACE.lastIndex;
}

/** The index just past the closing quote of the JSON string that opens at `open`. */
function stringEnd(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (close !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return close + 1;
    close = text.indexOf('"', close + 1);
  }
  return text.length;
}

/**
 * The JSON source text of a top-level number property of a JSON object, as the client wrote it
 * (cut after more characters than any amount needs), or `undefined` when it is absent or not a
 * number. Like `JSON.parse`, the last of duplicate keys wins, and keys are compared once unescaped.
 *
 * Meant for text that `JSON.parse` has accepted. A scan of the text rather than a second parse
 * with a reviver (ES2025 source text access): a reviver sends V8 down its slow path, several
 * microseconds a request; `money.test.ts` checks the scan against the reviver on random documents.
 */
export function numberSource(json: string, property: string): string | undefined {
  let found: string | undefined;
  let depth = 0;
  for (let i = 0; i < json.length; ) {
    // Straight to the next quote or bracket: long runs of digits or whitespace are skipped by the
    // regex engine, not one character at a time here.
    STRUCTURAL.lastIndex = i;
    if (!STRUCTURAL.test(json)) break;
    i = STRUCTURAL.lastIndex - 1;
    const c = json.charCodeAt(i);
    if (c !== QUOTE) {
      // Brackets inside strings never get here: strings are skipped whole.
      if (c === 0x7b || c === 0x5b) depth++;
      else depth--;
      i++;
      continue;
    }
    const end = stringEnd(json, i);
    const colon = depth === 1 ? skipWhitespace(json, end) : end;
    if (depth !== 1 || json.charCodeAt(colon) !== COLON) {
      i = end;
      continue;
    }
    // A key of the root object: its value decides `found`, whatever an earlier duplicate said.
    const value = skipWhitespace(json, colon + 1);
    if (keyEquals(json, i, end, property)) {
      NUMBER_TOKEN.lastIndex = value;
      found = NUMBER_TOKEN.exec(json)?.[0];
    }
    i = value;
  }
  return found;
}

/** Whether the JSON string token `json[open, end)` spells `property`, escapes decoded. */
function keyEquals(json: string, open: number, end: number, property: string): boolean {
  const raw = json.slice(open + 1, end - 1);
  return raw.includes('\\') ? JSON.parse(json.slice(open, end)) === property : raw === property;
}
