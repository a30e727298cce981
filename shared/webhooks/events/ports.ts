import type { Matching } from '../../wallet/model/matching.ts';
import type { EndpointStatus } from '../model/endpoint.ts';
import type { WebhookEventType } from '../model/event-types.ts';
import type { WebhookEvent } from '../model/webhook-event.ts';

/** Where a delivery task came from: the event as it happened, a replay, or one redelivery. */
export type DeliveryTrigger = 'schedule' | 'replay' | 'redeliver';

/** An event to store, with the endpoints subscribed to it now. */
export interface EventToRecord {
  readonly event: WebhookEvent;
  readonly endpointIds: readonly string[];
}

/**
 * What became of an event given to `recordAll`: stored now; stored before (with its tasks, so
 * nothing was written); or not stored, for the reason given (the stream delivers it again).
 */
export type RecordOutcome = 'recorded' | 'exists' | { readonly failed: unknown };

/** What the deriver needs of the events' table (implemented by ../dynamodb/event-store.ts). */
export interface EventStore {
  /**
   * Stores each event once, in the same transaction as a delivery task due now for each of its
   * endpoint ids; many events per request. The outcome of each, in order; never throws.
   */
  recordAll(entries: readonly EventToRecord[]): Promise<readonly RecordOutcome[]>;
  /**
   * A live delivery task due now for each of the endpoint ids of events stored before (endpoints
   * enabled while they were being stored); a task stored before stands. Throws when one cannot be written.
   */
  addLiveTasks(entries: readonly EventToRecord[]): Promise<void>;
}

/** A wallet's endpoint that takes events now (enabled), and the types it takes. */
export interface Subscription {
  readonly endpointId: string;
  readonly eventTypes: readonly WebhookEventType[];
}

/**
 * Which endpoints of each wallet take events now: the enabled ones, with their types. Ids only:
 * the deriver opens no secret (it holds no key to), the dispatcher does when it delivers.
 */
export interface SubscriberStore {
  /** Every wallet named, one entry each (empty for a wallet without endpoints). */
  subscriptions(addresses: readonly string[]): Promise<ReadonlyMap<string, readonly Subscription[]>>;
}

/** The reference and metadata of transfers whose entries do not carry them (posted credits). */
export interface TransferMatchingStore {
  matching(transferIds: readonly string[]): Promise<ReadonlyMap<string, Matching>>;
}

/** A page of a wallet's events, newest first. */
export interface EventPage {
  readonly items: readonly WebhookEvent[];
  readonly nextCursor?: string | undefined;
}

/** What the events API, replays and redeliveries need of the stored events. */
export interface EventReader {
  /** Up to `limit` events of the wallet, newest first, of `type` when given, after `cursor`. */
  page(
    address: string,
    options: { limit: number; type?: WebhookEventType | undefined; cursor?: string | undefined },
  ): Promise<EventPage>;
  /** One event by id, whoever's it is (the caller checks it is the wallet's); strongly consistent. */
  event(eventId: string): Promise<WebhookEvent | undefined>;
}

/** An endpoint as a replay or redelivery checks it: no secret. */
export interface EndpointState {
  readonly status: EndpointStatus;
  /** When its owner last enabled it again or moved it (../model/health.ts). */
  readonly healthFrom?: string | undefined;
}

/** Whether an endpoint of the wallet exists, and its state (replay, redelivery). */
export interface EndpointLookup {
  endpointState(address: string, endpointId: string): Promise<EndpointState | undefined>;
}

/** A replay: the one just started, or the endpoint's one in progress. */
export interface ReplayStart {
  readonly started: boolean;
  readonly replayId: string;
  readonly since: string;
  /** When it was asked (RFC 3339). */
  readonly startedAt: string;
  /** The `eventKey` (`<timestamp>#<id>`) of the last event it has expanded, or is expanding, into tasks, if any. */
  readonly expandedTo?: string | undefined;
}

/** The delivery tasks replays and redeliveries make (implemented by ../dynamodb/task-store.ts). */
export interface ReplayStore {
  /**
   * Starts a replay of the wallet's events since `since` to the endpoint, unless one of that
   * endpoint is still being expanded: then that one, as it was started (`started: false`). It is
   * due REPLAY_SETTLE_MS after `now` (../model/replay-settle.ts).
   */
  startReplay(address: string, endpointId: string, since: string, now: number): Promise<ReplayStart>;
  redeliver(event: WebhookEvent, endpointId: string, now: number): Promise<void>;
}
