import { InvalidParameterError } from '../errors.ts';

/**
 * A path or query parameter holding an integer JavaScript carries exactly: decimal digits, an
 * optional minus, within ±(2^53 − 1). Anything else is an {@link InvalidParameterError} naming it.
 */
export function safeIntegerParameter(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (raw === undefined || !/^-?\d{1,16}$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new InvalidParameterError(
      `${name} must be an integer between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`,
    );
  }
  return value;
}

/**
 * An optional integer query parameter within [min, max]; `fallback` when absent. Anything else,
 * an empty value included, is an {@link InvalidParameterError} naming the bounds.
 */
export function boundedIntegerParameter(
  name: string,
  raw: string | undefined,
  { min, max, fallback }: { readonly min: number; readonly max: number; readonly fallback: number },
): number {
  if (raw === undefined) return fallback;
  // Written as a plain integer: no sign, no leading zero (`0100` is refused, as is `1e2`).
  if (!/^(0|[1-9]\d{0,3})$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new InvalidParameterError(`${name} must be an integer from ${min} to ${max}`);
  }
  return Number(raw);
}

/** The items a page holds unless `limit` says otherwise, and the bounds of `limit`: one rule for every listing and search. */
export const PAGE_SIZE = { min: 1, max: 100, fallback: 20 } as const;

/** `limit` of a listing or search: {@link PAGE_SIZE}'s bounds, its fallback when absent. */
export const pageLimitParameter = (raw: string | undefined): number =>
  boundedIntegerParameter('limit', raw, PAGE_SIZE);

/**
 * A text parameter of `min` to `max` characters, counted in Unicode code points as the JSON
 * Schemas count them; an {@link InvalidParameterError} naming it otherwise.
 */
export function textParameter(
  name: string,
  raw: string,
  { min, max, pattern }: { min: number; max: number; pattern?: RegExp },
): string {
  let length = 0;
  for (const _ of raw) if (++length > max) break;
  if (length < min || length > max) {
    throw new InvalidParameterError(`${name} must be ${min} to ${max} characters long`);
  }
  if (pattern !== undefined && !pattern.test(raw)) {
    throw new InvalidParameterError(
      `${name} must be printable text: no control characters, bidirectional overrides or lone surrogates`,
    );
  }
  return raw;
}

/** One of `allowed`, or an {@link InvalidParameterError} listing them. */
export function enumParameter<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new InvalidParameterError(`${name} must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
}
