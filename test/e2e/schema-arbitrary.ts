/**
 * fast-check arbitraries generated from the OpenAPI document's schemas, for the subset of JSON
 * Schema the document uses: values the document calls valid, so the server must not refuse them.
 */
import fc from 'fast-check';
import { openApiJson } from '#shared/openapi.generated.js';
import { isProfiledIdentifier } from '#shared/schemas/identifier-profile.ts';
import { formatMinor } from '#shared/wallet/model/money.ts';

export type Schema = Readonly<Record<string, unknown>>;

export const document = JSON.parse(openApiJson) as Schema;

/** Strings are generated up to their bound when it is this or less, else up to this: longer is only slower. */
const LONGEST_GENERATED = 256;

const codePoints = (text: string) => [...text].length;

/** The node a `#/...` reference points at. */
export function resolve(schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>(
      (node, token) => (node as Schema)[token.replaceAll('~1', '/').replaceAll('~0', '~')],
      document,
    ) as Schema;
}

/**
 * Characters of one script each (with ASCII digits and punctuation, which go with any): an
 * identifier of the address profile (`x-identifier-profile`) is drawn from one of them, since
 * random graphemes almost never make one.
 */
const IDENTIFIER_ALPHABETS = [
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@+|~\u00E9\u00DF',
  '\u0430\u0431\u0432\u0433\u0434\u0435\u0436\u0437\u0438\u0439\u043A0123456789-_.',
  '\u03B1\u03B2\u03B3\u03B4\u03B5\u03B6\u03B7\u03B80123456789-_.',
  'abcxyz\u6771\u4EAC\u3072\u3089\u304C\u306A\u30AB\u30BF0123456789',
];

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = Math.min((schema.maxLength as number | undefined) ?? LONGEST_GENERATED, LONGEST_GENERATED);
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const length = { minLength: Math.max(min, 1), maxLength: Math.max(max, 1), size: 'max' } as const;
  if (schema['x-identifier-profile'] !== undefined) {
    return fc
      .constantFrom(...IDENTIFIER_ALPHABETS)
      .chain((alphabet) => fc.string({ ...length, unit: fc.constantFrom(...alphabet) }))
      .filter(isProfiledIdentifier);
  }
  // Any code point, surrogate halves included, for a free text; printable graphemes where a pattern narrows it.
  const unit = pattern ? 'grapheme' : 'binary';
  // `size: 'max'`: lengths up to the bound, not fast-check's default of a few characters.
  return fc
    .string({ ...length, unit })
    .filter(
      (text) =>
        codePoints(text) >= min && codePoints(text) <= max && (pattern === undefined || pattern.test(text)),
    );
}

/** A JSON number with at most `x-decimals` decimals, within its bounds, as exact JSON text. */
function amountArbitrary(schema: Schema): fc.Arbitrary<unknown> {
  const decimals = schema['x-decimals'] as number;
  const maxMinor = Math.round((schema.maximum as number) * 10 ** decimals);
  return fc
    .integer({ min: 1, max: maxMinor })
    .map((minor) => JSON.rawJSON(formatMinor(minor, { code: 'XXX', decimals })));
}

/** Values valid against `schema` (a node of the document). */
export function valid(input: Schema): fc.Arbitrary<unknown> {
  const schema = resolve(input);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({
        min: (schema.minimum as number | undefined) ?? Number.MIN_SAFE_INTEGER,
        max: (schema.maximum as number | undefined) ?? Number.MAX_SAFE_INTEGER,
      });
    case 'number':
      return amountArbitrary(schema);
    case 'array':
      return fc.array(valid(schema.items as Schema), {
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 5, 5),
      });
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      return fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, valid(property)])),
        { requiredKeys: (schema.required ?? []) as string[] },
      );
    }
    default:
      throw new Error(`No arbitrary for schema ${JSON.stringify(schema)}`);
  }
}

/** The schema of an operation's JSON request body, or of one of its parameters. */
export function operationSchema(
  path: string,
  method: string,
  part: { body: true } | { parameter: string },
): Schema {
  const operation = ((document.paths as Schema)[path] as Schema)[method] as Schema;
  if ('body' in part) {
    const content = (operation.requestBody as Schema).content as Schema;
    return (content['application/json'] as Schema).schema as Schema;
  }
  const parameter = (operation.parameters as Schema[]).find((p) => p.name === part.parameter);
  if (!parameter) throw new Error(`${method} ${path} has no parameter ${part.parameter}`);
  return parameter.schema as Schema;
}
