/**
 * Building blocks shared by every contract. Kept as `as const` literals so that
 * `json-schema-to-ts` can derive TypeScript types from the very objects that ajv compiles.
 */
import { MAX_VIOLATION_TEXT, MAX_VIOLATIONS_LISTED } from '../errors.ts';

/** The largest integer a JSON number keeps exactly once parsed by JavaScript (2^53 − 1). */
export const MAX_SAFE_ID = 9_007_199_254_740_991;

/**
 * An int64 as Petstore defines it, limited to the range JavaScript numbers carry exactly:
 * a larger id would be silently rounded by `JSON.parse`, so it is refused instead of stored wrong.
 */
export const int64Schema = {
  type: 'integer',
  format: 'int64',
  minimum: -MAX_SAFE_ID,
  maximum: MAX_SAFE_ID,
} as const;

/**
 * Text without control characters (C0, DEL, C1), bidirectional embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069), or lone UTF-16 surrogates: they forge lines in logs and
 * terminals, make text display as other text, and a lone surrogate is no Unicode at all. Written
 * to mean the same with the `u` flag (ajv's: a pair is one code point, matched by the first
 * branch) and without it (Swagger UI's and most readers': a pair is two code units, matched by the
 * second), so that no reader of the document refuses an emoji the server takes.
 */
export const PRINTABLE_TEXT_PATTERN =
  '^(?:[^\\u0000-\\u001F\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$';

/** {@link PRINTABLE_TEXT_PATTERN} as the server checks it outside a schema (a query parameter). */
export const PRINTABLE_TEXT = new RegExp(PRINTABLE_TEXT_PATTERN, 'u');

/** RFC 9457 problem details, with the request id and, for validation failures, the violations found. */
export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string', description: 'URI reference identifying the problem type' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    requestId: { type: 'string', description: 'The API Gateway request id, for support' },
    errors: {
      type: 'array',
      description: `The violations found in the request, for 422 validation problems: the first ${MAX_VIOLATIONS_LISTED} at most, pointer and detail each at most ${MAX_VIOLATION_TEXT} characters`,
      maxItems: MAX_VIOLATIONS_LISTED,
      items: {
        type: 'object',
        required: ['pointer', 'detail'],
        properties: {
          pointer: { type: 'string', description: 'JSON Pointer (RFC 6901) into the request body' },
          detail: { type: 'string' },
        },
      },
    },
    errorCount: {
      type: 'integer',
      minimum: 1,
      description:
        'With `errors`: how many violations were found; more than `errors` lists when it was cut short',
    },
    endpointId: {
      type: 'string',
      description:
        'For webhook-endpoint-registered: the endpoint the Idempotency-Key registered (`Location` names it while it exists)',
    },
  },
} as const;
