/**
 * The one ajv configuration the project compiles its schemas with: the build step's standalone
 * validators and the tests that compare verdicts use the same options and custom keywords.
 */
import { _, Ajv, type Options } from 'ajv';

export function createAjv(schemas: readonly object[], options: Options = {}): Ajv {
  const ajv = new Ajv({
    schemas: [...schemas],
    allErrors: true,
    // `unicode` left at its default: lengths count code points, as JSON Schema (and so every reader
    // of the OpenAPI document) does; the build step inlines ajv's counting function.
    strict: true,
    // `int64` and `date-time` are documentation for OpenAPI readers; the schema's bounds do the checking.
    formats: { int64: true, 'date-time': true },
    ...options,
  });

  /**
   * `x-normalization-form: NFC` (shared/schemas/wallet.ts): text equal to its NFC form. Inlined as
   * one comparison, so the standalone code still imports nothing.
   */
  ajv.addKeyword({
    keyword: 'x-normalization-form',
    type: 'string',
    schemaType: 'string',
    code(cxt) {
      if (cxt.schema !== 'NFC')
        throw new Error(`x-normalization-form: only NFC is supported, got ${cxt.schema}`);
      cxt.fail(_`${cxt.data} !== ${cxt.data}.normalize("NFC")`);
    },
    error: { message: 'must be Unicode text in normalization form C (NFC)' },
  });
  return ajv;
}
