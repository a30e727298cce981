/**
 * The webhooks table's items (shared/dynamodb/tables.ts `webhooks`):
 * - `ENDPOINTS#<address>`: a wallet's endpoints, one item: `{address, version, endpoints: [...]}`,
 *   each endpoint with its sealed secrets. At most 10 endpoints of at most ~3 KB each keep it far
 *   below DynamoDB's 400 KB; the bound and every change are one conditional write on `version`,
 *   and the dispatcher finds every endpoint of a wallet in one read.
 * - `ATTEMPT#<endpointId>#<attemptedAt>#<eventId>#<attempt>`: one delivery attempt, with
 *   `deliveriesOf` = the endpoint's id and `attemptKey` = `<attemptedAt>#<eventId>#<attempt>` for the
 *   `deliveries` index (newest first), expiring as its event does (`EVENT_RETENTION_MS`).
 * - `IDEMPOTENCY#["<address>","<key>"]`: the Idempotency-Key of a registration, `{fingerprint,
 *   endpointId, expiresAt}`, written in the same transaction as the set (TTL on `expiresAt`). JSON
 *   quoting keeps an address and a key that hold `#` or `"` from reading as another pair.
 */
export const endpointsKey = (address: string) => `ENDPOINTS#${address}`;

export const createKeyItemKey = (address: string, key: string) =>
  `IDEMPOTENCY#${JSON.stringify([address, key])}`;

export const DELIVERIES_INDEX = 'deliveries';

/** The attempt's place in its endpoint's log: time first, so the index sorts by it. */
export const attemptKeyOf = (attemptedAt: string, eventId: string, attempt: number) =>
  `${attemptedAt}#${eventId}#${String(attempt).padStart(4, '0')}`;

/** An `attemptKeyOf` as this store writes them (the time as `toISOString` writes it). */
export const ATTEMPT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#evt_[A-Za-z0-9_-]{22}#\d{4,}$/;

export const attemptItemKey = (endpointId: string, attemptKey: string) =>
  `ATTEMPT#${endpointId}#${attemptKey}`;
