/**
 * What each function outside the route table may do to the tables: the stream readers and the
 * scheduled workers. The route table (shared/routes.ts) holds the route functions' grants; this
 * holds the rest. The constructs grant from it, and the table alarms sum over every operation that
 * either allows (`tableOperations` in infra/constructs/alarm-thresholds.ts), so that a worker's
 * throttled or failed requests raise its table's alarm too.
 */
import type { DataGrant } from '#shared/routes.ts';
import { PENDING_INDEX } from '#shared/wallet/dynamodb/keys.ts';
import { DUE_INDEX, EVENTS_INDEX } from '#shared/webhooks/dynamodb/event-keys.ts';

/** A worker's grant on a table, as a route's is (`Route.data`). */
export type WorkerGrant = DataGrant;

/**
 * What the poster does to the table, and nothing more: one strongly consistent BatchGetItem of the
 * wallet and its credits; one TransactWriteItems per posting, whose items are an Update of the
 * wallet, a Put per entry and an Update marking each credit posted (IAM authorises a transaction
 * by the actions of its items); the PutItem of the wallet's INBOUND# marker; the PutItem and
 * UpdateItems of its POSTING# lease; and, for the pollers waiting on that lease, Queries of the
 * `pending` index. It never scans, deletes or condition-checks.
 */
export const CREDIT_POSTER_GRANT: WorkerGrant = {
  table: 'wallets',
  actions: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
  indexes: [PENDING_INDEX],
};

/**
 * What the sweep does to the table, and nothing more: Queries of the `pending` index's
 * `COMPLETING#` keys, and one TransactWriteItems per batch it completes, whose items are a Put per
 * entry and Updates of the batch and its credits (IAM authorises a transaction by the actions of
 * its items). It never reads by key, scans or deletes.
 */
export const BATCH_SWEEP_GRANT: WorkerGrant = {
  table: 'wallets',
  actions: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  indexes: [PENDING_INDEX],
};

/** The ledger audit, read-only: a child scans one segment; the reducer re-reads by key. */
export const LEDGER_AUDIT_GRANTS = {
  segment: { table: 'wallets', actions: ['dynamodb:Scan'] },
  reducer: { table: 'wallets', actions: ['dynamodb:Scan', 'dynamodb:BatchGetItem'] },
} as const satisfies Record<string, WorkerGrant>;

/** The deriver's grants: the transfer records of posted credits (wallets), endpoint sets and events (webhooks). */
export const EVENT_DERIVER_GRANTS = {
  wallets: { table: 'wallets', actions: ['dynamodb:BatchGetItem'] },
  // BatchGetItem: the endpoint sets of a batch's wallets; PutItem: events and their tasks, many to
  // a TransactWriteItems (authorised by its Puts), and a task left out by a slow commit alone.
  webhooks: { table: 'webhooks', actions: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'] },
} as const satisfies Record<string, WorkerGrant>;

/**
 * The dispatcher's grant on the webhooks table: Query (the `due` index, and the `events` index a
 * replay expands), GetItem (an event too long for its task, an endpoint set), UpdateItem (claims,
 * outcomes), PutItem (an endpoint set's health, a replay's tasks), BatchWriteItem (attempts in the
 * delivery log and delivered tasks' ends, many to a request).
 */
export const WEBHOOK_DISPATCHER_GRANT: WorkerGrant = {
  table: 'webhooks',
  actions: [
    'dynamodb:Query',
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    'dynamodb:PutItem',
    'dynamodb:BatchWriteItem',
  ],
  indexes: [DUE_INDEX, EVENTS_INDEX],
};

/** Every worker's grant. */
export const WORKER_GRANTS: readonly WorkerGrant[] = [
  CREDIT_POSTER_GRANT,
  BATCH_SWEEP_GRANT,
  ...Object.values(LEDGER_AUDIT_GRANTS),
  ...Object.values(EVENT_DERIVER_GRANTS),
  WEBHOOK_DISPATCHER_GRANT,
];
