/**
 * The pet resource's contracts (Swagger Petstore v3 `/pet` operations), as
 * `openapi-operations.ts` holds the others: parameters with the bounds the functions check,
 * problems, answer headers and examples.
 */

import { BINARY_MEDIA_TYPES } from './http/binary-media.ts';
import { FORM_MAX_BYTES } from './http/form-body.ts';
import { idempotencyKeyParameter } from './http/idempotency-key.ts';
import { MAX_IF_MATCH_LENGTH } from './http/preconditions.ts';
import { type OperationContract, pageParameters } from './openapi-contract.ts';
import { IMAGE_MEDIA_TYPES, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE } from './pets/image-type.ts';
import { encodeCursor, MAX_CURSOR_LENGTH, statusSearch, tagsSearch } from './pets/pet-cursor.ts';
import { MAX_QUERY_TAGS, PET_STATUSES, pageAnswer as pageOf } from './pets/pet-http.ts';
import { MAX_ADDITIONAL_METADATA_LENGTH } from './pets/pet-image-http.ts';
import { MAX_PHOTO_URLS } from './pets/pet-images.ts';
import type { OperationId } from './routes.ts';
import { int64Schema, PRINTABLE_TEXT_PATTERN } from './schemas/common.ts';
import { petSchema, tagSchema } from './schemas/pet.ts';

type PetOperationId =
  | 'addPet'
  | 'getPetById'
  | 'updatePet'
  | 'updatePetWithForm'
  | 'deletePet'
  | 'findPetsByStatus'
  | 'findPetsByTags'
  | 'uploadFile'
  | 'getPetImage';

/** The example pet's one tag, which the findByTags example searches for. */
const EXAMPLE_TAG = 'friendly';

const PET_EXAMPLE = {
  id: 10,
  name: 'doggie',
  category: { id: 1, name: 'Dogs' },
  photoUrls: ['https://example.com/doggie.png'],
  tags: [{ id: 1, name: EXAMPLE_TAG }],
  status: 'available',
};

const petIdParameter = {
  name: 'petId',
  in: 'path',
  required: true,
  // The bounds the function checks: ids JavaScript numbers carry exactly.
  schema: {
    type: int64Schema.type,
    format: int64Schema.format,
    minimum: int64Schema.minimum,
    maximum: int64Schema.maximum,
  },
  description: 'Id of the pet, a decimal integer within ±(2^53 − 1)',
  example: 10,
};

const ifMatchParameter = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: MAX_IF_MATCH_LENGTH },
  description:
    "The pet's ETag as you last read it (or `*`): the change is made only if the pet is still at that revision, otherwise 412 and nothing changes. Without it the change is made whatever the pet's revision, as on the Petstore. Not a list of entity-tags: 400",
  example: '"k3pX0vQ9cT2mWbYd"',
};

const pageOfPets = pageParameters('Pets', {
  maxLength: MAX_CURSOR_LENGTH,
  description:
    'Where the next page starts: taken as is from the `Link: <…>; rel="next"` of the previous page. An edited cursor, or one of another search, is a 400',
});

const petAnswer = (description: string, example: object = PET_EXAMPLE) => ({
  status: 200,
  schema: 'StoredPet' as const,
  description,
  headers: [{ name: 'ETag' as const, required: true }],
  example,
});

/**
 * A page of a search, its `Link` example written by the function's own `pageAnswer` with a cursor
 * of this very search (`query` as the search's parameters): one the operation would take back.
 */
const pageAnswer = (description: string, query: [string, string][], cursor: string) => ({
  status: 200,
  schema: 'StoredPet' as const,
  array: true,
  description: `${description}, at most \`limit\` of them. When there may be more, \`Link\` holds the next page's address (\`rel="next"\`); a page may hold fewer pets than \`limit\`, even none, and still have a next one`,
  headers: [
    {
      name: 'Link' as const,
      required: false,
      example: pageOf([], cursor, [...query, ['limit', '20']]).headers?.link,
    },
  ],
  example: [PET_EXAMPLE],
});

export const petOperationContracts: Record<PetOperationId, OperationContract> &
  Partial<Record<OperationId, OperationContract>> = {
  addPet: {
    tag: 'pet',
    requestBody: 'Pet',
    requestExample: PET_EXAMPLE,
    success: {
      ...petAnswer(
        'The stored pet (or, for a replayed Idempotency-Key, the pet that first add added, with the ETag it had then)',
      ),
      headers: [
        { name: 'ETag', required: true },
        { name: 'Idempotent-Replayed', required: false },
      ],
    },
    problems: [
      'malformed-body',
      'invalid-parameter',
      'unsupported-media-type',
      'validation-failed',
      'already-exists',
      'idempotency-key-reused',
      'temporarily-unavailable',
    ],
    parameters: [
      idempotencyKeyParameter(
        "Makes an add safe to retry, a pet without an id above all (the server draws its id): the caller's same key with the same body answers the pet the first add added, adding nothing; with another body, 422. The same syntax as sendMoney's key. Kept for 24 hours.",
        'c7d1e0a4-add-doggie',
      ),
    ],
  },
  getPetById: {
    tag: 'pet',
    success: petAnswer('The pet'),
    problems: ['invalid-parameter', 'not-found', 'temporarily-unavailable'],
    parameters: [petIdParameter],
  },
  updatePet: {
    tag: 'pet',
    requestBody: 'Pet',
    requestExample: { ...PET_EXAMPLE, status: 'sold' },
    success: petAnswer('The pet as stored now (the body, with its id), and its new ETag', {
      ...PET_EXAMPLE,
      status: 'sold',
    }),
    problems: [
      'malformed-body',
      'invalid-parameter',
      'unsupported-media-type',
      'validation-failed',
      'not-found',
      'precondition-failed',
      'temporarily-unavailable',
    ],
    parameters: [ifMatchParameter],
  },
  updatePetWithForm: {
    tag: 'pet',
    success: petAnswer(
      'The pet as stored now, and its new ETag; as it was when neither name nor status is given',
    ),
    problems: [
      'invalid-parameter',
      'malformed-body',
      'unsupported-media-type',
      'payload-too-large',
      'not-found',
      'precondition-failed',
      'temporarily-unavailable',
    ],
    requestForm: {
      description: `name and status as a form (Swagger 2.0's formData), instead of in the query: at most ${FORM_MAX_BYTES} bytes, UTF-8, each field once, and not also in the query`,
      properties: {
        name: petSchema.properties.name,
        status: { type: 'string', enum: PET_STATUSES },
      },
    },
    parameters: [
      petIdParameter,
      {
        name: 'name',
        in: 'query',
        required: false,
        schema: petSchema.properties.name,
        description: 'New name of the pet',
        example: 'doggie',
      },
      {
        name: 'status',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: PET_STATUSES },
        description: 'New status of the pet',
        example: 'sold',
      },
      ifMatchParameter,
    ],
  },
  deletePet: {
    tag: 'pet',
    success: petAnswer('The pet as it was before it was deleted, and its last ETag'),
    problems: ['invalid-parameter', 'not-found', 'precondition-failed', 'temporarily-unavailable'],
    parameters: [
      petIdParameter,
      {
        name: 'api_key',
        in: 'header',
        required: false,
        schema: { type: 'string' },
        description: 'Read by nothing, kept for Petstore clients: the bearer token authorizes',
      },
      ifMatchParameter,
    ],
  },
  findPetsByStatus: {
    tag: 'pet',
    success: pageAnswer(
      'Pets with any of the statuses, each once, in no promised order',
      [['status', PET_EXAMPLE.status]],
      encodeCursor(statusSearch([PET_EXAMPLE.status]), { part: 3, after: 1042 }),
    ),
    problems: ['invalid-parameter', 'temporarily-unavailable'],
    parameters: [
      {
        name: 'status',
        in: 'query',
        required: false,
        explode: true,
        schema: {
          type: 'array',
          items: { type: 'string', enum: PET_STATUSES },
          default: ['available'],
        },
        description:
          'Statuses, comma-separated as the Petstore says (`?status=sold,pending`), the parameter repeated (`?status=sold&status=pending`), or both: the pets with any of them, each once, a status after another: a page reads no more than for one status, so follow `Link` even when a page holds fewer than `limit`. `available` when none is given. Each one of the three, none empty (`sold,` is a 400)',
        example: ['available'],
      },
      ...pageOfPets,
    ],
  },
  findPetsByTags: {
    tag: 'pet',
    success: pageAnswer(
      'Pets carrying any of the tags, each once, in no promised order; none for no tags',
      [['tags', EXAMPLE_TAG]],
      encodeCursor(tagsSearch([EXAMPLE_TAG]), { part: 0, after: 1042 }),
    ),
    problems: ['invalid-parameter', 'temporarily-unavailable'],
    parameters: [
      {
        name: 'tags',
        in: 'query',
        required: false,
        explode: true,
        schema: { type: 'array', maxItems: MAX_QUERY_TAGS, items: tagSchema.properties.name },
        description: `Tag names, comma-separated as the Petstore says (\`?tags=a,b\`), the parameter repeated (\`?tags=a&tags=b\`), or both: at most ${MAX_QUERY_TAGS} in all once split, none empty (\`a,,b\` is a 400). A comma always separates, \`%2C\` too: a tag whose name holds a comma cannot be searched for. Matched in Unicode normalization form C (a combining accent finds the precomposed one, and the reverse)`,
        example: ['friendly'],
      },
      ...pageOfPets,
    ],
  },
  uploadFile: {
    tag: 'pet',
    requestBytes: {
      mediaTypes: ['application/octet-stream', ...IMAGE_MEDIA_TYPES],
      description: `The image's bytes: PNG, JPEG, GIF or WebP, judged by the bytes themselves (their signature), whatever the Content-Type; at most 4 MiB (${MAX_IMAGE_BYTES} bytes: its base64 must fit Lambda's 6 MB invocation payload), and at most ${MAX_IMAGE_SIDE} pixels a side and ${MAX_IMAGE_PIXELS} in all by its header (413). Content-Type must be a binary media type of this API (${BINARY_MEDIA_TYPES.join(', ')}), or the bytes would arrive as text: 415`,
    },
    success: {
      status: 200,
      schema: 'ApiResponse',
      description: `The image is stored and its URL appended to the pet's photoUrls (at most ${MAX_PHOTO_URLS}); the pet's new ETag. GET that URL with read:pets (and Accept: image/*) to read the image back`,
      headers: [{ name: 'ETag', required: true }],
      example: {
        code: 200,
        type: 'image/png',
        message:
          "Stored image/png of 5120 bytes at https://api.example.com/prod/api/v3/pet/10/images/Q2hlY2tvdXRJbWFnZTAxMA, now the last of the pet's photoUrls",
      },
    },
    // 413 the image over 4 MiB or its pixel bounds (the gateway's own 413 is added per route); 415 no image; 422 the
    // pet already lists 20 photos. Nothing is stored on any of them.
    problems: [
      'malformed-body',
      'invalid-parameter',
      'unsupported-media-type',
      'payload-too-large',
      'not-found',
      'precondition-failed',
      'pet-photo-limit',
      'temporarily-unavailable',
    ],
    parameters: [
      petIdParameter,
      {
        name: 'additionalMetadata',
        in: 'query',
        required: false,
        schema: {
          type: 'string',
          maxLength: MAX_ADDITIONAL_METADATA_LENGTH,
          pattern: PRINTABLE_TEXT_PATTERN,
        },
        description: 'Kept with the image (not shown by the API)',
        example: 'front view',
      },
      ifMatchParameter,
    ],
  },
  getPetImage: {
    tag: 'pet',
    success: {
      status: 200,
      description:
        "The image's bytes as uploaded, with the media type they were recognised as, while the pet lists the image's URL in photoUrls: once the pet is deleted, or an update leaves the URL out, the image is 404 (as an id nobody was given), also for a pet added again under the same id. Kept by a client for a minute at most (Cache-Control: private, max-age=60). Send Accept: image/* (or the image's type): API Gateway answers bytes to a client whose first Accept type is binary, base64 text otherwise",
      mediaTypes: IMAGE_MEDIA_TYPES,
      binary: true,
    },
    problems: ['invalid-parameter', 'not-found', 'temporarily-unavailable'],
    parameters: [
      petIdParameter,
      {
        name: 'imageId',
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$' },
        description: "The image's id, as the URL in the pet's photoUrls names it",
        example: 'Q2hlY2tvdXRJbWFnZTAxMA',
      },
    ],
  },
};
