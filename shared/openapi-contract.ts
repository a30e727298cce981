/* The shape of an operation's contract (./openapi-operations.ts, ./openapi-pet-operations.ts, ./openapi-webhook-operations.ts): a
   file of its own, so that the per-resource contract files and their assembly do not import each other. */

import { PAGE_SIZE } from './http/parameters.ts';
import type { schemas } from './schemas/index.ts';

export type SchemaName = (typeof schemas)[number]['$id'] | 'StoredPet';

/** A response header, by name, as OpenAPI declares it. */
export interface HeaderUse {
  readonly name:
    | 'WWW-Authenticate'
    | 'Retry-After'
    | 'Idempotent-Replayed'
    | 'Allow'
    | 'ETag'
    | 'Link'
    | 'Location';
  /** Sent on every answer of this status (the e2e suite checks it is there). */
  readonly required: boolean;
  /** This operation's own example, where the header's general one would not be true of it. */
  readonly example?: string;
}

export interface OperationContract {
  readonly tag: 'pet' | 'wallet' | 'webhooks' | 'reference';
  readonly requestBody?: SchemaName;
  /** Media types of the request body where not only `application/json` (a merge patch). */
  readonly requestMediaTypes?: readonly string[];
  readonly requestExample?: unknown;
  /** A body of bytes instead of JSON (an upload): the media types it is taken with, and what it must be. */
  readonly requestBytes?: { readonly mediaTypes: readonly string[]; readonly description: string };
  /** An optional form body (`application/x-www-form-urlencoded`): its fields' schemas, and what it is. */
  readonly requestForm?: {
    readonly properties: Readonly<Record<string, object>>;
    readonly description: string;
  };
  readonly success: {
    readonly status: number;
    readonly schema?: SchemaName;
    /** The body is an array of `schema` (a page of a search). */
    readonly array?: boolean;
    readonly description: string;
    /** Media types of a success body that is not JSON (the reference page and its assets). */
    readonly mediaTypes?: readonly string[];
    /** The body of those media types is bytes (an image), not text. */
    readonly binary?: boolean;
    readonly headers?: readonly HeaderUse[];
    readonly example?: unknown;
  };
  /**
   * Slugs of the problems the function itself answers with (error-mapping.ts), besides the
   * scope re-check and the internal error every function has. The gateway's own are added per route.
   */
  readonly problems: readonly string[];
  readonly parameters?: readonly object[];
}

/**
 * The `limit` and `cursor` query parameters of a listing or search, with the bounds its function
 * checks: every page size is PAGE_SIZE; each cursor has its own longest text and its own refusal.
 */
export const pageParameters = (
  items: string,
  cursor: { readonly maxLength: number; readonly description: string },
): readonly object[] => [
  {
    name: 'limit',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.fallback },
    description: `${items} per page, at most`,
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    schema: { type: 'string', maxLength: cursor.maxLength },
    description: cursor.description,
  },
];
