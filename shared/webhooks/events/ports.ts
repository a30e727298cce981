import type { Matching } from '../../wallet/model/matching.ts';
import type { WebhookEventType } from '../model/event-types.ts';
import type { WebhookEvent } from '../model/webhook-event.ts';

/** Where a delivery task came from: the event as it happened, a replay, or one redelivery. */
export type DeliveryTrigger = 'schedule' | 'replay' | 'redeliver';

/** What the deriver needs of the events' table (implemented by ../dynamodb/event-store.ts). */
export interface EventStore {
  /**
   * Stores the event and, in the same transaction, a delivery task due now for each endpoint id:
   * once. `exists` when the event was stored before (its tasks then too): nothing is written.
   */
  record(event: WebhookEvent, endpointIds: readonly string[]): Promise<'recorded' | 'exists'>;
}

/**
 * Which endpoints of a wallet take events of a type now: enabled and subscribed. Ids only: the
 * deriver opens no secret (it holds no key to), the dispatcher does when it delivers.
 */
export interface SubscriberStore {
  subscribers(address: string, type: WebhookEventType): Promise<readonly string[]>;
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

/** Whether an endpoint of the wallet exists, and what it takes (replay, redelivery): no secret. */
export interface EndpointLookup {
  endpointTypes(address: string, endpointId: string): Promise<readonly WebhookEventType[] | undefined>;
}

/** The delivery tasks replays and redeliveries make (implemented by ../dynamodb/task-store.ts). */
export interface ReplayStore {
  startReplay(address: string, endpointId: string, since: string, now: number): Promise<string>;
  redeliver(event: WebhookEvent, endpointId: string, now: number): Promise<void>;
}
