import { problemSchema } from './common.ts';
import { petSchema } from './pet.ts';
import { balanceSchema, sendRequestSchema, transferSchema } from './wallet.ts';

/** Every top-level named schema (Category and Tag travel inside Pet): compiled into standalone validators at build time and published as OpenAPI components. */
export const schemas = [problemSchema, petSchema, sendRequestSchema, balanceSchema, transferSchema] as const;

/** The request bodies that get a generated validator: export name → schema `$id`. */
export const requestValidators = {
  validatePet: 'Pet',
  validateSendRequest: 'SendRequest',
} as const;
