/**
 * The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header): an Item
 * Structured Field whose value is a String (RFC 8941 §3.3.3, `sf-string`), sent once. The one rule
 * the send function parses with and the OpenAPI document publishes (as {@link IDEMPOTENCY_KEY_SCHEMA}).
 *
 * - A key is 1 to 255 visible ASCII characters: `"K-1"`, with `\"` and `\\` escapes inside the
 *   quotes. Bare, as most clients send it (`K-1`), it is taken as written, provided it holds no
 *   `"` and no `,` (so it is neither a broken sf-string nor a list).
 * - Repeated (two header lines, any case of the name) or combined (`K1, K2`, as RFC 9110 §5.3 lets
 *   an intermediary join the lines), it is refused: which key was meant cannot be known, and a
 *   silent pick made a retry move money twice.
 * - A malformed sf-string (`"a"b"`, a lone `"`, an escape other than `\"` and `\\`) is refused.
 *
 * The grammar is two lines of RFC 8941, so it is a pattern here rather than a parser library;
 * `test/unit/idempotency-key.test.ts` checks every verdict against `structured-headers`, a
 * maintained RFC 8941/9651 parser (docs/decisions/idempotency-key-header.md).
 */
import { InvalidParameterError } from '../errors.ts';

const MAX_KEY_LENGTH = 255;

/**
 * The header's value: an sf-string of 1–255 visible ASCII characters (escapes counted as the
 * character they stand for), or the same characters bare, without `"` or `,`.
 */
export const IDEMPOTENCY_KEY_PATTERN = `^(?:"(?:[!#-\\[\\]-~]|\\\\["\\\\]){1,${MAX_KEY_LENGTH}}"|[!#-+\\--~]{1,${MAX_KEY_LENGTH}})$`;

const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** The header parameter's schema in the OpenAPI document. */
export const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  // Every character of the key escaped, and its two quotes.
  maxLength: 2 * MAX_KEY_LENGTH + 2,
  pattern: IDEMPOTENCY_KEY_PATTERN,
} as const;

/**
 * The header as an operation's OpenAPI parameter, with what a retry of that operation gets
 * (`description`): one definition of its name, its rule and its place for every operation taking it.
 */
export const idempotencyKeyParameter = (description: string, example: string) => ({
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  // The rule the function parses the header with.
  schema: IDEMPOTENCY_KEY_SCHEMA,
  description,
  example,
});

export const IDEMPOTENCY_KEY_DESCRIPTION =
  'Makes the request safe to retry: the same key with the same body returns the original transfer and moves money once; with another body, 422. An RFC 8941 structured-field String (`"b5e0c8f2-transfer-42"`, `\\"` and `\\\\` escaped) of 1 to 255 visible ASCII characters, or the same characters bare without `"` or `,`. Sent at most once: a repeated header, or several keys in one (`k1, k2`), is refused with 400, as is a malformed String. Kept for at least 24 hours.';

/**
 * The key of a request, from every value the Idempotency-Key header was sent with: `undefined`
 * when it was not sent; an {@link InvalidParameterError} when it was sent more than once or is
 * not a valid key.
 */
export function idempotencyKeyOf(values: readonly string[]): string | undefined {
  if (values.length === 0) return undefined;
  if (values.length > 1) {
    throw new InvalidParameterError('Idempotency-Key must be sent once, with one key');
  }
  // Header values reach us with their surrounding white space removed; a value of only spaces is none.
  const value = (values[0] as string).trim();
  if (!KEY.test(value)) {
    throw new InvalidParameterError(
      'Idempotency-Key must be one structured-field String ("key") or bare key of 1 to 255 visible ASCII characters, without "," in a bare key',
    );
  }
  return value.startsWith('"') ? value.slice(1, -1).replace(/\\(["\\])/g, '$1') : value;
}
