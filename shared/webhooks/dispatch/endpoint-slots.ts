/**
 * How many deliveries a dispatcher runs at one endpoint: at most `perEndpoint` HTTP attempts at
 * once (slots, given in the order they were asked for), and claimed tasks more waiting for one
 * (holds count both): as many as its slots start within `slowAttemptMs` at the length its attempts
 * have taken here, at most `queuedPerEndpoint` and at least `perEndpoint` (that many once it is
 * slow). Until one of its attempts has ended here, one attempt and one wait. A task is claimed
 * before it waits for its slot, so the slot lasts the HTTP attempt only: an endpoint answering in
 * milliseconds gets its events at the pace of its answers, not of DynamoDB's round trips. An
 * endpoint is slow from the moment one of its attempts has run `slowAttemptMs` until one ends
 * sooner; the slow endpoints together hold at most `slowInFlight`. The waits past those allowances
 * are shed (the dispatcher moves them on), so that hanging endpoints hold few claims, and never the
 * whole dispatcher.
 */
export interface EndpointSlots {
  /**
   * Whether the endpoint's holds are all taken, or it is slow and the slow endpoints' share is:
   * its next due task is not claimed now.
   */
  full(endpointId: string): boolean;
  /**
   * Whether one of the endpoint's attempts is running, or the latest to end here ran, for
   * `slowAttemptMs` or more. Judged from the attempts running only, a hanging endpoint was fast
   * again each time its attempts timed out, and took a fast endpoint's holds until the next ones
   * had run a second.
   */
  slow(endpointId: string): boolean;
  /** The endpoint's holds now: its attempts, and the claimed tasks waiting for them. */
  held(endpointId: string): number;
  /** The slow endpoints' holds now, all together. */
  slowHeld(): number;
  /** Takes a hold of the endpoint for a task about to be claimed; answers what gives it back (once). */
  hold(endpointId: string): () => void;
  /**
   * Waits for a slot of the endpoint; answers what gives it back (once), to the next task waiting,
   * with `false` when no attempt ran in it; `undefined` when the wait was shed.
   */
  acquire(endpointId: string): Promise<((attempted?: boolean) => void) | undefined>;
  /**
   * Sheds the newest waits of every slow endpoint beyond `perEndpoint`, then, while the slow
   * endpoints' attempts and waits are more than `slowInFlight`, the newest of the longest queue;
   * answers how many.
   */
  shed(): number;
  /** Resolves when a hold is next given back: the endpoint may take a task more. */
  released(): Promise<void>;
  /**
   * Tasks per second the endpoint takes here: holds given back over the last second; `undefined`
   * until it has held tasks for a second without a break. Counted over less, a start's claims
   * made it too low (the first holds wait for them); taken from its attempts' length instead, an
   * endpoint answering in milliseconds seemed to take hundreds a second, where the dispatcher's
   * own round trips pace it.
   */
  pace(endpointId: string): number | undefined;
}

/** The window `pace` counts over. */
const PACE_WINDOW_MS = 1_000;

/** Endpoints whose attempts' length is kept: the ones used least lately are forgotten first. */
const ENDPOINTS_KEPT = 1_000;

export function createEndpointSlots({
  perEndpoint,
  queuedPerEndpoint,
  slowAttemptMs,
  slowInFlight,
  now,
}: {
  readonly perEndpoint: number;
  readonly queuedPerEndpoint: number;
  readonly slowAttemptMs: number;
  readonly slowInFlight: number;
  readonly now: () => number;
}): EndpointSlots {
  const running = new Map<string, Set<{ readonly since: number }>>();
  const waiting = new Map<string, Array<(taken: boolean) => void>>();
  const holds = new Map<string, number>();
  /**
   * Since when each endpoint has held a task without a break, and when holds were given back within
   * the pace window, oldest first.
   */
  const activity = new Map<string, { readonly since: number; readonly givenBack: number[] }>();
  /** How long the endpoint's latest attempt to end here ran, and a running mean of them. */
  const ended = new Map<string, { readonly latestMs: number; readonly typicalMs: number }>();
  let holdReleased: PromiseWithResolvers<void> | undefined;

  function record(endpointId: string, tookMs: number): void {
    const before = ended.get(endpointId);
    ended.delete(endpointId);
    if (ended.size >= ENDPOINTS_KEPT) ended.delete(ended.keys().next().value as string);
    const typicalMs = before ? before.typicalMs + (tookMs - before.typicalMs) / 4 : tookMs;
    ended.set(endpointId, { latestMs: tookMs, typicalMs });
  }

  /** Runs an attempt in a slot until what is answered is called. */
  function take(endpointId: string): (attempted?: boolean) => void {
    const slot = { since: now() };
    const slots = running.get(endpointId) ?? new Set();
    running.set(endpointId, slots.add(slot));
    return once((attempted = true) => {
      slots.delete(slot);
      // Given back unused at once, it would pass for an attempt answered in no time.
      if (attempted) record(endpointId, now() - slot.since);
      // The first attempt to end opens the endpoint's other slots: as many waits start.
      const queue = waiting.get(endpointId) ?? [];
      while (queue.length > 0 && slots.size < slotsOf(endpointId)) queue.shift()?.(true);
      if (queue.length === 0) waiting.delete(endpointId);
      if (slots.size === 0) running.delete(endpointId);
    });
  }

  /**
   * Attempts the endpoint may have at once: one until an attempt has ended here, so that endpoints
   * never heard from that hang hold one attempt each, not `perEndpoint`: sixteen of them held
   * every attempt of the dispatcher until their 15 s timeouts.
   */
  function slotsOf(endpointId: string): number {
    return ended.has(endpointId) ? perEndpoint : 1;
  }

  /** The endpoint's holds given back within the window (the older ones dropped). */
  function recent(times: number[]): number[] {
    const since = now() - PACE_WINDOW_MS;
    const first = times.findIndex((at) => at > since);
    if (first !== 0) times.splice(0, first === -1 ? times.length : first);
    return times;
  }

  function slow(endpointId: string): boolean {
    if ((ended.get(endpointId)?.latestMs ?? 0) >= slowAttemptMs) return true;
    const at = now();
    for (const slot of running.get(endpointId) ?? []) if (at - slot.since >= slowAttemptMs) return true;
    return false;
  }

  /**
   * Claimed tasks the endpoint may have waiting: what its slots start within `slowAttemptMs`.
   * Counted from its attempts, not its pace, which is what it was given, not what it can take.
   * An endpoint answering in a second held 28 waits, and two such with a backlog held every hold
   * of the dispatcher. One never heard from might hang: one wait, beside its one attempt.
   */
  function waitsAllowed(endpointId: string): number {
    const typicalMs = ended.get(endpointId)?.typicalMs;
    if (typicalMs === undefined) return 1;
    if (slow(endpointId)) return perEndpoint;
    const started = Math.ceil((perEndpoint * slowAttemptMs) / Math.max(1, typicalMs));
    return Math.max(perEndpoint, Math.min(queuedPerEndpoint, started));
  }

  /** What `count` says of each slow endpoint among `endpointIds`, by endpoint. */
  function slowLoad(endpointIds: Iterable<string>, count: (endpointId: string) => number) {
    const load = new Map<string, number>();
    for (const endpointId of endpointIds) if (slow(endpointId)) load.set(endpointId, count(endpointId));
    return load;
  }

  const sum = (load: Map<string, number>) => [...load.values()].reduce((all, one) => all + one, 0);

  const slowHeld = () => sum(slowLoad(holds.keys(), (id) => holds.get(id) ?? 0));

  return {
    full(endpointId) {
      if ((holds.get(endpointId) ?? 0) >= slotsOf(endpointId) + waitsAllowed(endpointId)) return true;
      return slow(endpointId) && slowHeld() >= slowInFlight;
    },
    slow,
    held: (endpointId) => holds.get(endpointId) ?? 0,
    slowHeld,
    hold(endpointId) {
      holds.set(endpointId, (holds.get(endpointId) ?? 0) + 1);
      if (!activity.has(endpointId)) activity.set(endpointId, { since: now(), givenBack: [] });
      return once(() => {
        const left = (holds.get(endpointId) ?? 1) - 1;
        if (left > 0) {
          holds.set(endpointId, left);
          activity.get(endpointId)?.givenBack.push(now());
          recent(activity.get(endpointId)?.givenBack ?? []);
        } else {
          holds.delete(endpointId);
          activity.delete(endpointId);
        }
        holdReleased?.resolve();
        holdReleased = undefined;
      });
    },
    acquire(endpointId) {
      if ((running.get(endpointId)?.size ?? 0) < slotsOf(endpointId))
        return Promise.resolve(take(endpointId));
      return new Promise((resolve) => {
        const queue = waiting.get(endpointId) ?? [];
        waiting.set(endpointId, queue);
        queue.push((taken) => resolve(taken ? take(endpointId) : undefined));
      });
    },
    shed() {
      let shed = 0;
      const give = (queue: Array<(taken: boolean) => void>, from: number) => {
        for (const giveUp of queue.splice(from)) {
          giveUp(false);
          shed++;
        }
      };
      for (const [endpointId, queue] of waiting)
        if (queue.length > perEndpoint && slow(endpointId)) give(queue, perEndpoint);
      // Counted from the attempts and waits, not the holds: a shed wait's hold is given back only
      // once its task is moved on, and the next poll would shed more for it.
      const load = slowLoad(
        running.keys(),
        (id) => (running.get(id)?.size ?? 0) + (waiting.get(id)?.length ?? 0),
      );
      for (let excess = sum(load) - slowInFlight; excess > 0; excess--) {
        let longest: Array<(taken: boolean) => void> | undefined;
        for (const endpointId of load.keys()) {
          const queue = waiting.get(endpointId);
          if (queue && queue.length > (longest?.length ?? 0)) longest = queue;
        }
        if (!longest) break;
        give(longest, longest.length - 1);
      }
      return shed;
    },
    released() {
      holdReleased ??= Promise.withResolvers<void>();
      return holdReleased.promise;
    },
    pace(endpointId) {
      const seen = activity.get(endpointId);
      if (!seen || now() - seen.since < PACE_WINDOW_MS) return undefined;
      return Math.max(1, (recent(seen.givenBack).length * 1_000) / PACE_WINDOW_MS);
    },
  };
}

function once<Args extends unknown[]>(run: (...args: Args) => void): (...args: Args) => void {
  let done = false;
  return (...args) => {
    if (done) return;
    done = true;
    run(...args);
  };
}
