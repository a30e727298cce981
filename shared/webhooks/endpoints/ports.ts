import type { WebhookEndpoint } from '../model/endpoint.ts';
import type { DeliveryAttempt } from '../model/ports.ts';
import type { SealedSecret } from '../secrets/envelope.ts';

/** A signing secret as stored: sealed, with when it stops signing once a successor replaced it. */
export interface StoredSecret {
  readonly sealed: SealedSecret;
  readonly createdAt: string;
  /** RFC 3339: set on rotation to 24 h later; absent on the current secret. */
  readonly retiresAt?: string;
}

/** An endpoint as stored: its owner's view and its secrets, newest first. */
export interface StoredEndpoint extends WebhookEndpoint {
  readonly secrets: readonly StoredSecret[];
  /** See HealthState: not shown to its owner. */
  readonly healthFrom?: string;
}

/** A wallet's endpoints and the version that guards their next write. */
export interface EndpointSet {
  readonly address: string;
  /** 0 when the wallet never had one. */
  readonly version: number;
  readonly endpoints: readonly StoredEndpoint[];
}

/**
 * The record of a registration's Idempotency-Key: whose (the set's wallet), the key, the
 * fingerprint of the request it came with, the endpoint it registered, and until when it holds.
 */
export interface CreateKeyRecord {
  readonly key: string;
  readonly fingerprint: string;
  readonly endpointId: string;
  /** Epoch seconds, DynamoDB's TTL attribute; a record past it counts as none. */
  readonly expiresAt: number;
  /** Epoch seconds when written: an older record expired by then may be replaced. */
  readonly writtenAt: number;
}

/** An attempt as the delivery log shows it: as the dispatcher reported it, within its endpoint's log. */
export type AttemptView = Omit<DeliveryAttempt, 'address' | 'endpointId'>;

export interface AttemptPage {
  readonly items: readonly AttemptView[];
  /** Opaque; absent on the last page. */
  readonly nextCursor?: string;
}

/**
 * What the endpoint use cases need of the table (implemented by ../dynamodb/endpoint-store.ts).
 * A wallet's endpoints are one set, written whole under a version: the 10-endpoint bound and
 * every change are one conditional write, and a write that lost a race is tried again on a fresh read.
 */
export interface WebhookEndpointStore {
  /** The longest one write can take, its own retries included: no write starts that could outlast the answer. */
  readonly longestWriteMs: number;
  readEndpoints(address: string): Promise<EndpointSet>;
  /** The set and the record of the wallet's Idempotency-Key `key` (as stored, expired or not), read together. */
  readEndpointsAndKey(
    address: string,
    key: string,
  ): Promise<{ set: EndpointSet; keyRecord?: CreateKeyRecord | undefined }>;
  /**
   * Writes the set if its version is still `set.version` (then it becomes `set.version + 1`), and
   * with `keyRecord`, that record in the same write if the key has none unexpired;
   * `false` when another write came first.
   */
  writeEndpoints(set: EndpointSet, keyRecord?: CreateKeyRecord): Promise<boolean>;
  /** The endpoint's attempts, newest first. `cursor` is one this method returned for the same endpoint. */
  listAttempts(
    endpointId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<AttemptPage>;
}
