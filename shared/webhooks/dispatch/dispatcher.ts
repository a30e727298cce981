/**
 * The dispatcher (issue 46): polls the due delivery tasks, delivers each through `deliver` (one
 * signed HTTP attempt, shared/webhooks/delivery/), records the attempt and ends the task or makes
 * it due again on the schedule. State lives in the tasks, not here: a task is claimed with a lease
 * longer than an attempt can take, so a dispatcher killed mid-attempt loses nothing (the task is due
 * again when the lease lapses, and goes out with the same `webhook-id`). Per endpoint at most
 * `perEndpoint` attempts run at once in a dispatcher; a task of an endpoint at its cap is not
 * claimed but deferred, so a hanging endpoint holds its own slots only and delays no other.
 */
import type { Clock } from '../../wallet/model/ports.ts';
import type { EventReader } from '../events/ports.ts';
import type { Deliver } from '../model/delivery.ts';
import type { DeliveryEndpointStore } from '../model/ports.ts';
import { nextDelayMs } from '../model/retry-schedule.ts';
import type { WebhookEvent } from '../model/webhook-event.ts';
import type { DeliveryTask, DueWork, ReplayTask, TaskStore } from './ports.ts';

export interface DispatcherSettings {
  /** Seconds before each attempt (the Standard Webhooks schedule unless WEBHOOK_RETRY_SCHEDULE). */
  readonly schedule: readonly number[];
  /**
   * Attempts one endpoint may have in flight from this dispatcher. Deployed, at most two
   * dispatchers run at once (`WEBHOOK_DISPATCHER.concurrentInvocations`, reserved): 4 each keeps
   * an endpoint at 8 in all. Locally the invocations share one dispatcher, so 4.
   */
  readonly perEndpoint: number;
  /** Attempts in flight from this dispatcher, all endpoints together. */
  readonly inFlight: number;
  /** How long a claim holds a task: past the longest attempt (its 15 s timeout) and its writes. */
  readonly leaseMs: number;
  /** How many due tasks one poll reads. */
  readonly pollBatch: number;
  /** How many events one step of a replay expands. */
  readonly replayStep: number;
}

export const DEFAULT_DISPATCHER_SETTINGS: DispatcherSettings = {
  schedule: [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
  perEndpoint: 4,
  inFlight: 64,
  leaseMs: 30_000,
  pollBatch: 100,
  replayStep: 100,
};

export interface DispatcherDependencies {
  readonly tasks: TaskStore;
  readonly events: Pick<EventReader, 'event'>;
  readonly endpoints: DeliveryEndpointStore;
  readonly deliver: Deliver;
  readonly clock: Clock;
  readonly settings: DispatcherSettings;
  /** Called once per attempt and per task ended, for metrics and logs (no secret, no body). */
  readonly observe?: (observation: DispatchObservation) => void;
}

export type DispatchObservation =
  | {
      readonly kind: 'attempt';
      readonly outcome: string;
      readonly durationMs: number;
      readonly lagMs: number;
      readonly attempt: number;
    }
  | { readonly kind: 'ended'; readonly end: string }
  | { readonly kind: 'disabled' }
  /** How long the oldest task a poll found had been due: how far the dispatcher is behind. */
  | { readonly kind: 'lag'; readonly oldestDueMs: number }
  | { readonly kind: 'failed'; readonly error: unknown };

/** How many events' bodies a dispatcher keeps: their tasks for several endpoints reuse one read. */
const EVENTS_KEPT = 1_000;

/**
 * How long an endpoint as read (its URL, secrets, status) serves the attempts that follow: a busy
 * endpoint's deliveries then cost one read (and one opening of its secrets) a second, not one each.
 * A change by its owner (disabled, rotated) reaches the dispatcher within this.
 */
export const ENDPOINT_FRESH_MS = 1_000;

export function makeDispatcher({
  tasks,
  events,
  endpoints,
  deliver,
  clock,
  settings,
  observe,
}: DispatcherDependencies) {
  /** Attempts in flight, by endpoint id. */
  const running = new Map<string, number>();
  /** Work this dispatcher has claimed and not finished, by key: never claimed twice from here. */
  const mine = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  const bodies = new Map<string, WebhookEvent>();
  const endpointsRead = new Map<
    string,
    { readonly at: number; readonly endpoint: ReturnType<DeliveryEndpointStore['endpointOf']> }
  >();

  function endpointOf(address: string, endpointId: string) {
    const key = JSON.stringify([address, endpointId]);
    const known = endpointsRead.get(key);
    if (known && clock.now() - known.at < ENDPOINT_FRESH_MS) return known.endpoint;
    const endpoint = endpoints.endpointOf(address, endpointId);
    if (endpointsRead.size >= EVENTS_KEPT) endpointsRead.delete(endpointsRead.keys().next().value as string);
    endpointsRead.set(key, { at: clock.now(), endpoint });
    // A failed read is not kept.
    endpoint.catch(() => endpointsRead.delete(key));
    return endpoint;
  }

  async function eventOf(eventId: string): Promise<WebhookEvent | undefined> {
    const known = bodies.get(eventId);
    if (known) return known;
    const found = await events.event(eventId);
    if (found) {
      if (bodies.size >= EVENTS_KEPT) bodies.delete(bodies.keys().next().value as string);
      bodies.set(eventId, found);
    }
    return found;
  }

  async function attempt(task: DeliveryTask, leaseUntil: number): Promise<void> {
    const event = await eventOf(task.eventId);
    const nowIso = () => new Date(clock.now()).toISOString();
    if (!event) {
      await tasks.finish(task, leaseUntil, 'event-expired', nowIso());
      observe?.({ kind: 'ended', end: 'event-expired' });
      return;
    }
    const endpoint = await endpointOf(task.address, task.endpointId);
    if (endpoint?.status !== 'enabled') {
      // Deleted or disabled since: its missed events stay in the events API, for a replay.
      await tasks.finish(task, leaseUntil, 'endpoint-disabled', nowIso());
      observe?.({ kind: 'ended', end: 'endpoint-disabled' });
      return;
    }
    const number = task.attempts + 1;
    const attemptedAt = clock.now();
    const result = await deliver(endpoint, { id: event.id, body: event.body });
    observe?.({
      kind: 'attempt',
      outcome: result.outcome,
      durationMs: result.durationMs,
      lagMs: attemptedAt - Date.parse(event.timestamp),
      attempt: number,
    });
    const health = await endpoints.recordAttempt({
      address: task.address,
      endpointId: task.endpointId,
      eventId: event.id,
      eventType: event.type,
      attempt: number,
      attemptedAt: new Date(attemptedAt).toISOString(),
      outcome: result.outcome,
      ...(result.statusCode === undefined ? {} : { statusCode: result.statusCode }),
      ...(result.errorClass === undefined ? {} : { errorClass: result.errorClass }),
      durationMs: result.durationMs,
      trigger: task.trigger,
    });
    if (health.disabledNow) observe?.({ kind: 'disabled' });
    if (health.status !== 'enabled') endpointsRead.delete(JSON.stringify([task.address, task.endpointId]));
    if (result.outcome === 'delivered') {
      await tasks.finish(task, leaseUntil, 'delivered', nowIso());
      observe?.({ kind: 'ended', end: 'delivered' });
      return;
    }
    if (result.outcome === 'gone' || health.status !== 'enabled') {
      await tasks.finish(task, leaseUntil, 'endpoint-disabled', nowIso());
      observe?.({ kind: 'ended', end: 'endpoint-disabled' });
      return;
    }
    const delay = nextDelayMs(number, { schedule: settings.schedule, retryAfterMs: result.retryAfterMs });
    if (delay === null) {
      await tasks.finish(task, leaseUntil, 'gave-up', nowIso());
      observe?.({ kind: 'ended', end: 'gave-up' });
      return;
    }
    await tasks.reschedule(task, leaseUntil, clock.now() + delay, number);
  }

  async function expand(replay: ReplayTask, leaseUntil: number): Promise<void> {
    const endpoint = await endpoints.endpointOf(replay.address, replay.endpointId);
    // A replay of an endpoint deleted since expands to nothing; its tasks then end at their first try.
    await tasks.expandReplay(replay, leaseUntil, endpoint?.eventTypes ?? [], settings.replayStep);
  }

  /** Takes a slot of the endpoint (before its claim, so that claims in flight count against the cap). */
  const reserve = (endpointId: string) => running.set(endpointId, (running.get(endpointId) ?? 0) + 1);
  function release(endpointId: string): void {
    const left = (running.get(endpointId) ?? 1) - 1;
    if (left > 0) running.set(endpointId, left);
    else running.delete(endpointId);
  }

  /** Runs one claimed piece of work in the background, in the slot reserved for it. */
  function start(work: DueWork, leaseUntil: number): void {
    const run = (work.kind === 'task' ? attempt(work, leaseUntil) : expand(work, leaseUntil))
      .catch((error: unknown) => {
        // Left claimed: it is due again when the lease lapses, with the same webhook-id.
        observe?.({ kind: 'failed', error });
      })
      .finally(() => {
        release(work.endpointId);
        mine.delete(work.key);
        inFlight.delete(run);
      });
    inFlight.add(run);
  }

  /**
   * One poll: reads what is due, claims (all at once) and starts what the caps allow, and defers
   * the tasks of endpoints at their cap by a little, so that the next polls read past them.
   * Answers how many were started.
   */
  async function poll(): Promise<number> {
    const now = clock.now();
    const due = await tasks.due(now, settings.pollBatch);
    const oldest = due.find((work) => !mine.has(work.key));
    observe?.({ kind: 'lag', oldestDueMs: oldest ? Math.max(0, now - oldest.dueAt) : 0 });
    let started = 0;
    let reserved = 0;
    const claims: Promise<unknown>[] = [];
    for (const work of due) {
      if (mine.has(work.key)) continue;
      if (inFlight.size + reserved >= settings.inFlight) break;
      const busy = (running.get(work.endpointId) ?? 0) >= settings.perEndpoint;
      const leaseUntil = clock.now() + settings.leaseMs;
      mine.add(work.key);
      if (busy) {
        // Not an attempt: the task moves a second on, and other endpoints' tasks come first.
        claims.push(
          tasks
            .claim(work, leaseUntil)
            .then((claimed) =>
              claimed ? tasks.reschedule(work, leaseUntil, clock.now() + 1_000) : undefined,
            )
            .catch(() => undefined)
            .finally(() => mine.delete(work.key)),
        );
        continue;
      }
      reserve(work.endpointId);
      reserved++;
      claims.push(
        tasks
          .claim(work, leaseUntil)
          .catch((error: unknown) => {
            observe?.({ kind: 'failed', error });
            return false;
          })
          .then((claimed) => {
            reserved--;
            if (!claimed) {
              release(work.endpointId);
              mine.delete(work.key);
              return;
            }
            start(work, leaseUntil);
            started++;
          }),
      );
    }
    await Promise.all(claims);
    return started;
  }

  /** Waits for every attempt in flight. */
  async function drain(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return { poll, drain, inFlight: () => inFlight.size };
}

export type Dispatcher = ReturnType<typeof makeDispatcher>;

/**
 * Polls until `signal` aborts (or `until`, epoch ms), every `pollMs` when idle and at once while
 * there is more; then lets the attempts in flight finish.
 */
export async function runDispatcher(
  dispatcher: Dispatcher,
  {
    pollMs,
    signal,
    until,
    onError,
  }: { pollMs: number; signal?: AbortSignal; until?: number; onError?: (error: unknown) => void },
): Promise<void> {
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  while (!signal?.aborted && (until === undefined || Date.now() < until)) {
    let started = 0;
    try {
      started = await dispatcher.poll();
    } catch (error) {
      onError?.(error);
    }
    if (started === 0) await sleep(pollMs);
  }
  await dispatcher.drain();
}
