/**
 * The webhooks table's items of the deriving and dispatching half (beside ./keys.ts, the endpoints'):
 * - `EVENT#<eventId>`: one event, immutable: `type`, `address`, `timestamp`, `body` (the exact text
 *   delivered), `eventsOf` = the wallet and `eventKey` = `<timestamp>#<eventId>` for the `events`
 *   index (a wallet's events, newest first), `expiresAt` 30 days after the event (TTL).
 * - `TASK#<eventId>#<endpointId>#<origin>`: one delivery to do (`origin` is `live` for the event as
 *   it happened, a fresh id for each replay or redelivery): `attempts` made so far, `trigger`, and
 *   while it is not done `dueShard` + `dueAt` (epoch ms) in the sparse `due` index that the
 *   dispatcher polls. A claim moves `dueAt` past the attempt's longest time (a lease): a dispatcher
 *   killed mid-attempt leaves the task due again when it lapses. Kept 30 days (TTL).
 * - `REPLAY#<endpointId>`: the endpoint's replay (one at a time), being expanded into tasks:
 *   `replayId`, `since`, the `cursor` of the events already expanded, and the same `dueShard` +
 *   `dueAt` while not done; `ended` once done, when the next replay may take its place.
 */
import { createHash } from 'node:crypto';

export const eventKey = (eventId: string) => `EVENT#${eventId}`;
export const taskKey = (eventId: string, endpointId: string, origin: string) =>
  `TASK#${eventId}#${endpointId}#${origin}`;
export const replayKey = (endpointId: string) => `REPLAY#${endpointId}`;

/** The origin of the task of an event as it happened (a replay's or redelivery's is a fresh id). */
export const LIVE_ORIGIN = 'live';

export const EVENTS_INDEX = 'events';
export const DUE_INDEX = 'due';

/**
 * How many keys of the `due` index tasks are spread over: each poll queries all of them (4
 * Queries, four times a second, idle or not). A key takes 1,000 writes/s, and a task is written
 * about three times (created, claimed, done): 4 keys take about 1,300 deliveries/s. A merchant
 * paid more often than that needs more keys (docs/decisions/webhooks.md, "Limits").
 */
export const DUE_SHARDS = 4;

/** The `due` key of a task: a shard picked by its item key, so one event's tasks spread too. */
export function dueShardOf(pk: string): string {
  const hash = createHash('sha256').update(pk).digest().readUInt32BE(0);
  return dueShardKey(hash % DUE_SHARDS);
}

export const dueShardKey = (shard: number) => `DUE#${shard}`;

/** Epoch seconds `ms` after `iso`, for TTL. */
export const expiresAfter = (iso: string, ms: number) => Math.floor((Date.parse(iso) + ms) / 1000);
