import type { ErrorObject } from 'ajv';
import type { Violation } from '../errors.ts';
import { MAX_SAFE_ID } from '../schemas/common.ts';

/** Turns ajv's errors into violations a client can act on, one per problem found. */
export function toViolations(errors: readonly ErrorObject[] | null | undefined): Violation[] {
  return (errors ?? []).map((error) => {
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
      case 'pattern':
        // The one pattern is the address rule's (shared/schemas/wallet.ts).
        return {
          pointer: instancePath,
          detail:
            'must not contain control, invisible formatting (zero-width, bidi, BOM, soft hyphen), private-use, unassigned or surrogate characters, nor line separators',
        };
      default:
        return { pointer: instancePath, detail: error.message ?? keyword };
    }
  });
}

/** RFC 6901 escaping of one reference token. */
const escapePointerToken = (token: string): string => token.replaceAll('~', '~0').replaceAll('/', '~1');
