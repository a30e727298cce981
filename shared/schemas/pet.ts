import type { FromSchema } from 'json-schema-to-ts';
import { int64Schema, PRINTABLE_TEXT_PATTERN } from './common.ts';

const nameSchema = { type: 'string', minLength: 1, maxLength: 200, pattern: PRINTABLE_TEXT_PATTERN } as const;

/** A tag's or a category's name: what `findByTags` takes as a tag, and an index key of its own. */
const partNameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  pattern: PRINTABLE_TEXT_PATTERN,
} as const;

/** Swagger Petstore v3 `Category`. */
export const categorySchema = {
  $id: 'Category',
  type: 'object',
  additionalProperties: false,
  properties: { id: int64Schema, name: partNameSchema },
} as const;

/** Swagger Petstore v3 `Tag`. */
export const tagSchema = {
  $id: 'Tag',
  type: 'object',
  additionalProperties: false,
  properties: { id: int64Schema, name: partNameSchema },
} as const;

/** Swagger Petstore v3 `Pet`: the body of `addPet` and the shape stored and returned. */
export const petSchema = {
  $id: 'Pet',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'photoUrls'],
  properties: {
    id: int64Schema,
    name: nameSchema,
    category: categorySchema,
    photoUrls: {
      type: 'array',
      maxItems: 20,
      items: { type: 'string', minLength: 1, maxLength: 2048, pattern: PRINTABLE_TEXT_PATTERN },
    },
    tags: { type: 'array', maxItems: 20, items: tagSchema },
    status: {
      type: 'string',
      description: 'pet status in the store',
      enum: ['available', 'pending', 'sold'],
    },
  },
} as const;

/** A pet as a client sends it (the id is optional: the server assigns one). */
export type PetInput = FromSchema<typeof petSchema>;

/** A pet as stored and returned: always with its id. */
export type Pet = PetInput & { id: number };

/** Swagger Petstore v3 `ApiResponse`: the answer of `uploadFile`. */
export const apiResponseSchema = {
  $id: 'ApiResponse',
  type: 'object',
  additionalProperties: false,
  required: ['code', 'type', 'message'],
  properties: {
    code: { type: 'integer', format: 'int32', description: 'The status, 200' },
    type: { type: 'string', description: 'The media type the image was recognised as by its bytes' },
    message: {
      type: 'string',
      description: "What was stored and the URL it is served at, as the pet's photoUrls now ends with",
    },
  },
} as const;
