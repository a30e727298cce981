/* The shape of an operation's contract (./openapi-operations.ts, ./openapi-pet-operations.ts): a
   file of its own, so that the per-resource contract files and their assembly do not import each other. */

import type { schemas } from './schemas/index.ts';

export type SchemaName = (typeof schemas)[number]['$id'] | 'StoredPet';

/** A response header, by name, as OpenAPI declares it. */
export interface HeaderUse {
  readonly name: 'WWW-Authenticate' | 'Retry-After' | 'Idempotent-Replayed' | 'Allow' | 'ETag' | 'Link';
  /** Sent on every answer of this status (the e2e suite checks it is there). */
  readonly required: boolean;
}

export interface OperationContract {
  readonly tag: 'pet' | 'wallet' | 'reference';
  readonly requestBody?: SchemaName;
  readonly requestExample?: unknown;
  readonly success: {
    readonly status: number;
    readonly schema?: SchemaName;
    /** The body is an array of `schema` (a page of a search). */
    readonly array?: boolean;
    readonly description: string;
    /** Media types of a success body that is not JSON (the reference page and its assets). */
    readonly mediaTypes?: readonly string[];
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
