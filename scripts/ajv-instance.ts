/**
 * The one ajv configuration the project compiles its schemas with: the build step's standalone
 * validators and the tests that compare verdicts use the same options and custom keywords.
 */
import { _, Ajv, type Options } from 'ajv';
import { isProfiledIdentifier } from '../shared/schemas/identifier-profile.ts';

/**
 * The module the `x-identifier-profile` check comes from, as the standalone code names it: the
 * build step turns this `require` into an import (`scripts/generate-validators.ts`).
 */
export const IDENTIFIER_PROFILE_MODULE = './identifier-profile.ts';

/** The profile's name in the schema: RFC 8265's, with UTS #39's restriction level. */
export const IDENTIFIER_PROFILE = 'PRECIS-UsernameCasePreserved+UTS39-HighlyRestrictive';

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
   * `x-identifier-profile` (shared/schemas/wallet.ts): an identifier of the profile
   * `shared/schemas/identifier-profile.ts` applies (PRECIS UsernameCasePreserved, UTS #39 Highly
   * Restrictive); the only profile there is, named so that the document says which it is.
   */
  ajv.addKeyword({
    keyword: 'x-identifier-profile',
    type: 'string',
    schemaType: 'string',
    code(cxt) {
      if (cxt.schema !== IDENTIFIER_PROFILE)
        throw new Error(`x-identifier-profile: only ${IDENTIFIER_PROFILE} is supported, got ${cxt.schema}`);
      const check = cxt.gen.scopeValue('func', {
        ref: isProfiledIdentifier,
        code: _`require(${IDENTIFIER_PROFILE_MODULE}).isProfiledIdentifier`,
      });
      cxt.fail(_`!${check}(${cxt.data})`);
    },
    error: {
      message:
        'must be an identifier: letters, marks and digits of one script (or Latin with Han and kana, Bopomofo or Hangul), and ASCII punctuation; no white space, symbol beyond ASCII, invisible, compatibility (fullwidth) or mixed-script lookalike character',
    },
  });
  return ajv;
}
