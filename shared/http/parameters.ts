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
