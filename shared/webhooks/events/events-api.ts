/**
 * The events API (issue 46): a wallet's events of the last 30 days, one by id, a replay of them
 * to an endpoint, one event delivered again. For the wallet's owner only: another wallet's event
 * or endpoint is not found (404), never forbidden, so an id confirms nothing.
 */
import {
  EndpointDisabledError,
  NotFoundError,
  ReplayInProgressError,
  ValidationError,
} from '../../errors.ts';
import type { Clock } from '../../wallet/model/ports.ts';
import type { WebhookEventType } from '../model/event-types.ts';
import { EVENT_ID, EVENT_RETENTION_MS, type WebhookEvent } from '../model/webhook-event.ts';
import type { EndpointLookup, EndpointState, EventPage, EventReader, ReplayStore } from './ports.ts';

const NO_EVENT = 'No event of yours has this id';
const NO_ENDPOINT = 'No webhook endpoint of yours has this id';

/** RFC 3339 date-time, as `since` must be written (a UTC offset or Z, seconds required). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export interface EventsApiDependencies {
  readonly events: EventReader;
  readonly endpoints: EndpointLookup;
  readonly replays: ReplayStore;
  readonly clock: Clock;
}

export function makeEventsApi({ events, endpoints, replays, clock }: EventsApiDependencies) {
  /**
   * Whether an event is within the 30 days kept. DynamoDB's TTL deletes an expired item only
   * within a few days of its `expiresAt`, so what is stored is no answer by itself.
   */
  const kept = (event: WebhookEvent) => Date.parse(event.timestamp) >= clock.now() - EVENT_RETENTION_MS;

  /** The caller's event, or a 404 for anyone else's, an unknown, a malformed or an expired id. */
  async function ownEvent(sub: string, eventId: string): Promise<WebhookEvent> {
    const event = EVENT_ID.test(eventId) ? await events.event(eventId) : undefined;
    if (!event || event.address !== sub || !kept(event)) throw new NotFoundError(NO_EVENT);
    return event;
  }

  /**
   * The caller's endpoint, enabled: a 404 (in the path) or 422 (named in a body) for anyone
   * else's or an unknown one, a 409 for a disabled one. A disabled endpoint is sent nothing, so a
   * replay or redelivery to it was a 202 that did nothing.
   */
  async function enabledEndpoint(sub: string, endpointId: string, pointer?: string): Promise<EndpointState> {
    const state = await endpoints.endpointState(sub, endpointId);
    if (!state) {
      // Named in a body, an unknown endpoint is a bad value there; in the path, a resource not found.
      if (pointer) throw new ValidationError([{ pointer, detail: NO_ENDPOINT }]);
      throw new NotFoundError(NO_ENDPOINT);
    }
    if (state.status === 'disabled') {
      throw new EndpointDisabledError(
        'The webhook endpoint is disabled and is sent nothing: enable it (PATCH its status to enabled), then ask again',
      );
    }
    return state;
  }

  return {
    /** Newest first, so the first expired event ends the list: every later one is older. */
    async list(
      sub: string,
      options: { limit: number; type?: WebhookEventType | undefined; cursor?: string | undefined },
    ): Promise<EventPage> {
      const page = await events.page(sub, options);
      const items = page.items.filter(kept);
      return items.length < page.items.length ? { items } : page;
    },

    get: ownEvent,

    /** Every event of the wallet since `since` to the endpoint again (a task that expands them): 202. */
    async replay(
      sub: string,
      endpointId: string,
      since: string,
    ): Promise<{ replayId: string; since: string }> {
      const endpoint = await enabledEndpoint(sub, endpointId);
      const at = RFC3339.test(since) ? Date.parse(since) : Number.NaN;
      const now = clock.now();
      if (!Number.isFinite(at)) {
        throw new ValidationError([
          { pointer: '/since', detail: 'must be an RFC 3339 date-time, e.g. 2026-01-02T03:04:05Z' },
        ]);
      }
      if (at < now - EVENT_RETENTION_MS || at > now) {
        throw new ValidationError([
          { pointer: '/since', detail: 'must be within the last 30 days, events are kept that long' },
        ]);
      }
      const from = new Date(at).toISOString();
      // One replay per endpoint at a time: a request asked again (a client's retry, a click
      // repeated) while the first is being expanded sends nothing twice, and a wallet's 30 days do
      // not go out once per request. Asked again after it has expanded, it is a replay of its own.
      const replay = await replays.startReplay(sub, endpointId, from, now);
      // One in progress since no later than asked, which has expanded nothing from then on yet,
      // sends all this one would, as the endpoint is now. One since later does not; nor does one
      // that has expanded past `from`: those tasks may have ended while the endpoint was disabled.
      // Nor one asked before the endpoint was enabled again (or moved): it may end before an event
      // stored while it was disabled is (../model/replay-settle.ts), and such a replay answered
      // "covered" sent it never (review helper-37).
      const covered =
        replay.since <= from &&
        (replay.expandedTo === undefined || replay.expandedTo < from) &&
        (endpoint.healthFrom === undefined || endpoint.healthFrom < replay.startedAt);
      if (!replay.started && !covered) {
        throw new ReplayInProgressError(
          `Replay ${replay.replayId} of this endpoint, of the events since ${replay.since}, is still being sent: ask again once it is done`,
        );
      }
      return { replayId: replay.replayId, since: replay.since };
    },

    /** One event to one endpoint of the wallet again, whatever its earlier deliveries: 202. */
    async redeliver(sub: string, eventId: string, endpointId: string): Promise<void> {
      const event = await ownEvent(sub, eventId);
      await enabledEndpoint(sub, endpointId, '/webhookId');
      await replays.redeliver(event, endpointId, clock.now());
    },
  };
}
