import type { ErrorObject } from 'ajv';
import { MAX_VIOLATIONS_LISTED, type Violation } from '../errors.ts';
import { MAX_SAFE_ID } from '../schemas/common.ts';

/**
 * Turns ajv's errors into violations a client can act on, one per problem found. `if` errors are
 * the wrappers {@link withEarlyStops} adds: the violation is the error inside.
 */
export function toViolations(errors: readonly ErrorObject[] | null | undefined): Violation[] {
  return (errors ?? [])
    .filter((error) => error.keyword !== 'if')
    .map((error) => {
      const { keyword, params, instancePath } = error;
      switch (keyword) {
        case 'required':
          return {
            pointer: `${instancePath}/${escapePointerToken(params.missingProperty)}`,
            detail: 'is required',
          };
        case 'additionalProperties':
          return {
            pointer: `${instancePath}/${escapePointerToken(params.additionalProperty)}`,
            detail: 'is not allowed',
          };
        case 'maximum':
        case 'minimum':
          if (Math.abs(Number(params.limit)) === MAX_SAFE_ID) {
            return {
              pointer: instancePath,
              detail: `must be between -${MAX_SAFE_ID} and ${MAX_SAFE_ID}: larger int64 values cannot be carried exactly by a JSON number in JavaScript`,
            };
          }
          return { pointer: instancePath, detail: error.message ?? keyword };
        case 'enum':
          return {
            pointer: instancePath,
            detail: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`,
          };
        default:
          return { pointer: instancePath, detail: error.message ?? keyword };
      }
    });
}

/** RFC 6901 escaping of one reference token. */
const escapePointerToken = (token: string): string => token.replaceAll('~', '~0').replaceAll('/', '~1');

type SchemaNode = { readonly [keyword: string]: unknown };

/** Checks `then` only when `condition` holds (the node itself reports the failed condition). */
function guard(node: Record<string, unknown>, condition: object, then: object): void {
  if ('if' in node) throw new Error('withEarlyStops: a schema with its own `if` is not supported');
  node.if = condition;
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then`, compiled by ajv, never awaited.
  node.then = then;
}

/**
 * A schema that accepts exactly what `schema` accepts, for ajv's `allErrors` mode, but whose
 * validator stops early on an oversized array or object. ajv with `allErrors` checks every item
 * of an array even after `maxItems` failed (and every key against `additionalProperties: false`),
 * so a large body of wrong items made an error object per item (docs/decisions/validation-early-stop.md). Here
 * the items are checked only when the array is within `maxItems` (`if`/`then`), and an object
 * with `additionalProperties: false` gets `maxProperties` (its properties plus as many unknown
 * ones as a problem lists: more is invalid anyway) and checks its keys only within it, as does a
 * map with its own `maxProperties`. ajv has no option to cap its errors.
 * Used by the build step only; the published schemas (OpenAPI) stay as written.
 */
export function withEarlyStops(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withEarlyStops);
  if (schema === null || typeof schema !== 'object') return schema;
  const node: Record<string, unknown> = Object.fromEntries(
    Object.entries(schema as SchemaNode).map(([keyword, value]) => [
      keyword,
      // `properties` maps names to schemas: each is a schema, the map itself is not.
      keyword === 'properties'
        ? Object.fromEntries(Object.entries(value as SchemaNode).map(([k, v]) => [k, withEarlyStops(v)]))
        : withEarlyStops(value),
    ]),
  );
  if (typeof node.maxItems === 'number' && 'items' in node) {
    guard(node, { maxItems: node.maxItems }, { items: node.items });
    delete node.items;
  } else if (node.additionalProperties === false && node.properties) {
    const names = Object.keys(node.properties);
    // Room for as many unknown properties as a problem lists, each named; more is only counted.
    node.maxProperties ??= names.length + MAX_VIOLATIONS_LISTED;
    // `additionalProperties` sees only the `properties` beside it: the names come along (`true`: their schemas stay above).
    const known = Object.fromEntries(names.map((name) => [name, true]));
    guard(node, { maxProperties: node.maxProperties }, { properties: known, additionalProperties: false });
    delete node.additionalProperties;
  } else if (typeof node.maxProperties === 'number' && !node.properties) {
    // A map (string keys to one schema, like a transfer's `metadata`): its keys and values are
    // checked only within `maxProperties`, or a body of many bad keys makes an error per key.
    const then: Record<string, unknown> = {};
    for (const keyword of ['additionalProperties', 'propertyNames', 'patternProperties'] as const) {
      if (keyword in node) {
        then[keyword] = node[keyword];
        delete node[keyword];
      }
    }
    if (Object.keys(then).length > 0) guard(node, { maxProperties: node.maxProperties }, then);
  }
  return node;
}
