/**
 * The dispatcher (issue 46): polls the due delivery tasks, delivers each through `deliver` (one
 * signed HTTP attempt, shared/webhooks/delivery/), records the attempt and ends the task or makes
 * it due again on the schedule. State lives in the tasks, not here: a task is claimed with a lease
 * longer than an attempt can take, so a dispatcher killed mid-attempt loses nothing (the task is due
 * again when the lease lapses, and goes out with the same `webhook-id`). Per endpoint at most
 * `perEndpoint` attempts run at once in a dispatcher (one until it has answered here), and as many
 * claimed tasks wait for them as they start within a second, `queuedPerEndpoint` at most,
 * `perEndpoint` once it is slow; the slow endpoints together take at most `slowInFlight`, beside
 * the `inFlight` of all (./endpoint-slots.ts). Further tasks of
 * an endpoint that answers stay due for the next poll, unless more is due than a poll reads: then
 * they are deferred to its pace, so that its backlog hides no other endpoint's tasks. Once one of
 * its attempts has run `slowAttemptMs`, they are deferred in any case, so a hanging endpoint holds
 * its own slots only and delays no other. A poll's claims, and its deferrals, are one request
 * each; the next poll waits for the claims only, so a deferral in flight delays no other endpoint
 * either.
 */
import type { Clock } from '../../wallet/model/ports.ts';
import type { EventReader } from '../events/ports.ts';
import type { Deliver } from '../model/delivery.ts';
import type { DeliveryEndpointStore } from '../model/ports.ts';
import { nextDelayMs } from '../model/retry-schedule.ts';
import type { WebhookEvent } from '../model/webhook-event.ts';
import { createEndpointReads } from './endpoint-reads.ts';
import { createEndpointSlots } from './endpoint-slots.ts';
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
  /**
   * Claimed tasks that may wait for a slot of an endpoint that answers (`perEndpoint` once it is
   * slow): what one poll claims for a busy merchant. Each poll takes a few of DynamoDB's round
   * trips, so this, not the endpoint, paced a merchant paid many times at once (issue 46).
   */
  readonly queuedPerEndpoint: number;
  /**
   * How long an attempt may run before its endpoint counts as slow: the due tasks of a slow
   * endpoint at its cap are moved a second on, so that polls read past them to other endpoints';
   * those of an endpoint that answers within this wait in the index for its next free slot.
   */
  readonly slowAttemptMs: number;
  /**
   * How far a slow endpoint's due tasks are moved on at each poll that finds it full (and its
   * shed waits): its attempts take a second or more each, 4 at a time, so a task moved on 5 s
   * loses little. A backlog is spread over as many steps of it as it needs (`deferredUntil`).
   */
  readonly deferMs: number;
  /**
   * Holds (attempts, and claimed tasks waiting for one) in flight from this dispatcher, all
   * endpoints together, besides the slow endpoints' share (`slowInFlight`).
   */
  readonly inFlight: number;
  /**
   * What the slow endpoints may hold together (attempts and claimed waits), counted beside
   * `inFlight`: the endpoints that answer keep at least `inFlight - slowInFlight` of it, and all of
   * it once the slow ones are within their share. Without a share, eight endpoints that hang (4
   * attempts and 4 waits each) held every hold, and no other merchant was told anything until they
   * timed out; counted within `inFlight`, sixteen that had answered once and then hung did (their
   * attempts cannot be shed).
   */
  readonly slowInFlight: number;
  /**
   * How long a claim holds a task: a third to wait for a slot, then the longest attempt (its 15 s
   * timeout) and its writes. A task that waited longer is left for the lease to lapse.
   */
  readonly leaseMs: number;
  /** How many due tasks one poll reads. */
  readonly pollBatch: number;
  /** How many events one step of a replay expands. */
  readonly replayStep: number;
}

export const DEFAULT_DISPATCHER_SETTINGS: DispatcherSettings = {
  schedule: [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
  perEndpoint: 4,
  queuedPerEndpoint: 28,
  slowAttemptMs: 1_000,
  deferMs: 5_000,
  inFlight: 64,
  slowInFlight: 32,
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

/** A replay's or a redelivery's task: asked by the endpoint's owner, maybe just after changing it. */
const ownerAsked = (task: DeliveryTask) => task.trigger !== 'schedule';

/** How many events' bodies a dispatcher keeps: their tasks for several endpoints reuse one read. */
const EVENTS_KEPT = 1_000;

export function makeDispatcher({
  tasks,
  events,
  endpoints,
  deliver,
  clock,
  settings,
  observe,
}: DispatcherDependencies) {
  const slots = createEndpointSlots({ ...settings, now: () => clock.now() });
  /** Work this dispatcher has claimed and not finished, by key: never claimed twice from here. */
  const mine = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  /** The deferral in flight: one at a time, and no poll waits for it. */
  let deferring: Promise<unknown> | undefined;
  /** The latest time an answering endpoint's backlog was deferred to, by endpoint. */
  const pacedUntil = new Map<string, number>();
  const bodies = new Map<string, WebhookEvent>();
  const endpointReads = createEndpointReads(endpoints, clock);

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

  /**
   * One attempt of a claimed task, in a slot of its endpoint. `unhold` gives back the task's hold
   * once the HTTP attempt has ended: the caps bound requests at the endpoint, not the writes after.
   */
  async function attempt(
    task: DeliveryTask,
    foundBy: number,
    leaseUntil: number,
    unhold: () => void,
  ): Promise<void> {
    const event = task.event ?? (await eventOf(task.eventId));
    const nowIso = () => new Date(clock.now()).toISOString();
    if (!event) {
      await tasks.finish(task, leaseUntil, 'event-expired', nowIso());
      observe?.({ kind: 'ended', end: 'event-expired' });
      return;
    }
    // A replay or redelivery, asked by the owner, goes to the endpoint as read after it was found:
    // one read before may predate a change of its URL, asked just before it (as first built, it was
    // sent to the URL left). Ended for good likewise only on such a read: one from before may
    // predate its enabling again (as first built, a replay asked just after sent nothing).
    let endpoint = await endpointReads.read(task.address, task.endpointId, ownerAsked(task) ? foundBy : 0);
    if (endpoint?.status !== 'enabled')
      endpoint = await endpointReads.read(task.address, task.endpointId, foundBy);
    if (endpoint?.status !== 'enabled') {
      // Deleted or disabled since: its missed events stay in the events API, for a replay.
      await tasks.finish(task, leaseUntil, 'endpoint-disabled', nowIso());
      observe?.({ kind: 'ended', end: 'endpoint-disabled' });
      return;
    }
    const free = await slots.acquire(task.endpointId);
    if (!free) {
      // Shed: the endpoint turned slow while this waited. Moved on, as its due tasks are.
      await tasks.reschedule(task, leaseUntil, clock.now() + settings.deferMs);
      return;
    }
    if (clock.now() >= leaseUntil - (settings.leaseMs * 2) / 3) {
      // Waited a third of its lease (the endpoint slowed down meanwhile): the rest is the attempt's
      // (15 s of 30) and its records'. After half, as first built, an attempt could end with the
      // lease, its records refused and the task taken again by another dispatcher at once. Left
      // claimed, it is due again when the lease lapses; nothing was sent.
      free(false);
      return;
    }
    const number = task.attempts + 1;
    const attemptedAt = clock.now();
    const result = await deliver(endpoint, { id: event.id, body: event.body }).finally(() => {
      free();
      unhold();
    });
    observe?.({
      kind: 'attempt',
      outcome: result.outcome,
      durationMs: result.durationMs,
      lagMs: attemptedAt - Date.parse(event.timestamp),
      attempt: number,
    });
    const recorded = endpoints.recordAttempt(
      {
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
      },
      // As read within ENDPOINT_FRESH_MS: a delivery to a healthy endpoint changes nothing of it.
      endpoint,
    );
    // Delivered is final whatever the endpoint's health: the task ends with the attempt's record.
    const [health] = await Promise.all([
      recorded,
      result.outcome === 'delivered' ? tasks.finish(task, leaseUntil, 'delivered', nowIso()) : undefined,
    ]);
    if (health.disabledNow) observe?.({ kind: 'disabled' });
    if (health.status !== 'enabled') endpointReads.forget(task.address, task.endpointId);
    if (result.outcome === 'delivered') {
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

  /**
   * When each deferred task is due again, in the order they were due.
   * - A slow endpoint's: as many each `deferMs` as it may hold once slow (2 × `perEndpoint`). All
   *   at `deferMs`, a backlog came due at once every `deferMs`, filled the polls' pages ahead of
   *   other endpoints' tasks and was written again each time: a task waiting a minute was written
   *   twelve times.
   * - An answering endpoint's backlog: one after another at the pace it takes them, after what it
   *   holds now and what was deferred before (`pacedUntil`), so that each comes due about when it
   *   can be taken, and is written once more, not at every poll.
   */
  function deferredUntil(works: readonly DueWork[], now: number): number[] {
    const before = new Map<string, number>();
    return works.map((work) => {
      const { endpointId } = work;
      if (slots.slow(endpointId)) {
        const place = before.get(endpointId) ?? 0;
        before.set(endpointId, place + 1);
        return now + settings.deferMs * (1 + Math.floor(place / (2 * settings.perEndpoint)));
      }
      const step = 1_000 / (slots.pace(endpointId) ?? settings.perEndpoint);
      const at = Math.ceil(
        Math.max(now + slots.held(endpointId) * step, pacedUntil.get(endpointId) ?? 0) + step,
      );
      pacedUntil.set(endpointId, at);
      return at;
    });
  }

  /** Runs one claimed piece of work in the background, under the hold taken for it. */
  function start(work: DueWork, foundBy: number, leaseUntil: number, unhold: () => void): void {
    const run = (work.kind === 'task' ? attempt(work, foundBy, leaseUntil, unhold) : expand(work, leaseUntil))
      .catch((error: unknown) => {
        // Left claimed: it is due again when the lease lapses, with the same webhook-id.
        observe?.({ kind: 'failed', error });
      })
      .finally(() => {
        unhold();
        mine.delete(work.key);
        inFlight.delete(run);
      });
    inFlight.add(run);
  }

  /**
   * One poll: reads what is due, claims (all at once) and starts what the holds allow. The further
   * tasks of an endpoint stay due while it answers (a hold is given back within `slowAttemptMs`, and
   * the loop polls again then); those of a slow endpoint are moved a little on, so that the next
   * polls read past them. Answers how many were started.
   */
  async function poll(): Promise<number> {
    slots.shed();
    const now = clock.now();
    for (const [endpointId, at] of pacedUntil) if (at <= now) pacedUntil.delete(endpointId);
    const { works: due, more } = await tasks.due(now, settings.pollBatch);
    const foundBy = endpointReads.pollAnswered();
    const oldest = due.find((work) => !mine.has(work.key));
    observe?.({ kind: 'lag', oldestDueMs: oldest ? Math.max(0, now - oldest.dueAt) : 0 });
    let started = 0;
    const taken: { readonly work: DueWork; readonly unhold: () => void }[] = [];
    const deferred: DueWork[] = [];
    for (const work of due) {
      if (mine.has(work.key)) continue;
      // The slow endpoints' holds, up to their share, come beside `inFlight`: their attempts run
      // until they time out and cannot be shed, and sixteen endpoints that answered once and then
      // hung held all 64 for 15 s (test/unit/webhook-dispatcher-shared-cap.test.ts).
      const room = settings.inFlight + Math.min(settings.slowInFlight, slots.slowHeld());
      if (inFlight.size + taken.length >= room) break;
      const busy = slots.full(work.endpointId);
      // Left as it is while nothing waits behind the page: moving it would be a write, for a hold
      // free in a moment. With more due than the page holds, an answering endpoint's backlog is
      // moved on too, once its pace is known (after a second busy): left, it filled every
      // page and hid every other endpoint's tasks until it was under a page
      // (test/integration/webhook-isolation.test.ts). Anything busy is left while a deferral is
      // still being written: the first poll after it moves them.
      const movable = slots.slow(work.endpointId) || (more && slots.pace(work.endpointId) !== undefined);
      if (busy && (deferring || !movable)) continue;
      mine.add(work.key);
      if (busy) deferred.push(work);
      else taken.push({ work, unhold: slots.hold(work.endpointId) });
    }
    // Not attempts: claimed until they are due again, so that the polls meanwhile read past them
    // to other endpoints' tasks. One request for them all, which no poll waits for: when DynamoDB
    // held it, every endpoint's next poll waited out its tries (6 of up to 2 s each).
    if (deferred.length > 0) {
      deferring = tasks
        .claimAll(deferred, deferredUntil(deferred, clock.now()))
        .catch(() => undefined)
        .finally(() => {
          for (const work of deferred) mine.delete(work.key);
          deferring = undefined;
        });
    }
    if (taken.length > 0) {
      // Their endpoints are read while the claim is in flight, not after it: after a quiet second
      // (ENDPOINT_FRESH_MS), a burst's first deliveries waited for the claim and then the read.
      for (const { work } of taken)
        if (work.kind === 'task')
          void endpointReads.read(work.address, work.endpointId, ownerAsked(work) ? foundBy : 0);
      // Claimed together: one request for the poll's tasks rather than one each.
      const leaseUntil = clock.now() + settings.leaseMs;
      const claimed = await tasks
        .claimAll(
          taken.map(({ work }) => work),
          leaseUntil,
        )
        .catch((error: unknown) => {
          observe?.({ kind: 'failed', error });
          return taken.map(() => false);
        });
      taken.forEach(({ work, unhold }, at) => {
        if (!claimed[at]) {
          unhold();
          mine.delete(work.key);
          return;
        }
        start(work, foundBy, leaseUntil, unhold);
        started++;
      });
    }
    return started;
  }

  /** Waits for every attempt, and the deferral, in flight. */
  async function drain(): Promise<void> {
    while (inFlight.size > 0 || deferring) await Promise.allSettled([...inFlight, deferring]);
  }

  /** Resolves when an endpoint may next take a task more (never, while nothing is in flight). */
  const freed = (): Promise<void> => slots.released();

  return { poll, drain, freed, inFlight: () => inFlight.size };
}

export type Dispatcher = ReturnType<typeof makeDispatcher>;
