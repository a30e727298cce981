/**
 * How many deliveries a dispatcher runs at one endpoint: at most `perEndpoint` HTTP attempts at
 * once (slots, given in the order they were asked for), and claimed tasks more waiting for one
 * (holds count both): `queuedPerEndpoint` while the endpoint answers, `perEndpoint` once it is
 * slow. A task is claimed before it waits for its slot, so the slot lasts the HTTP attempt only:
 * an endpoint answering in milliseconds gets its events at the pace of its answers, not of
 * DynamoDB's round trips. When it turns slow, the tasks waiting past its allowance are shed (the
 * dispatcher moves them on), so that a hanging endpoint holds few claims for long.
 */
export interface EndpointSlots {
  /** Whether the endpoint's holds are all taken: its next due task is not claimed now. */
  full(endpointId: string): boolean;
  /** Whether one of the endpoint's attempts has run for `slowAttemptMs` or more. */
  slow(endpointId: string): boolean;
  /** Takes a hold of the endpoint for a task about to be claimed; answers what gives it back (once). */
  hold(endpointId: string): () => void;
  /**
   * Waits for a slot of the endpoint; answers what gives it back (once), to the next task waiting;
   * `undefined` when the wait was shed.
   */
  acquire(endpointId: string): Promise<(() => void) | undefined>;
  /** Sheds the newest waits of every slow endpoint beyond `perEndpoint`; answers how many. */
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

export function createEndpointSlots({
  perEndpoint,
  queuedPerEndpoint,
  slowAttemptMs,
  now,
}: {
  readonly perEndpoint: number;
  readonly queuedPerEndpoint: number;
  readonly slowAttemptMs: number;
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
  let holdReleased: PromiseWithResolvers<void> | undefined;

  /** Runs an attempt in a slot until what is answered is called. */
  function take(endpointId: string): () => void {
    const slot = { since: now() };
    const slots = running.get(endpointId) ?? new Set();
    running.set(endpointId, slots.add(slot));
    return once(() => {
      slots.delete(slot);
      const next = waiting.get(endpointId)?.shift();
      if (waiting.get(endpointId)?.length === 0) waiting.delete(endpointId);
      if (next) next(true);
      else if (slots.size === 0) running.delete(endpointId);
    });
  }

  /** The endpoint's holds given back within the window (the older ones dropped). */
  function recent(times: number[]): number[] {
    const since = now() - PACE_WINDOW_MS;
    const first = times.findIndex((at) => at > since);
    if (first !== 0) times.splice(0, first === -1 ? times.length : first);
    return times;
  }

  function slow(endpointId: string): boolean {
    const at = now();
    for (const slot of running.get(endpointId) ?? []) if (at - slot.since >= slowAttemptMs) return true;
    return false;
  }

  return {
    full: (endpointId) =>
      (holds.get(endpointId) ?? 0) >= perEndpoint + (slow(endpointId) ? perEndpoint : queuedPerEndpoint),
    slow,
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
      if ((running.get(endpointId)?.size ?? 0) < perEndpoint) return Promise.resolve(take(endpointId));
      return new Promise((resolve) => {
        const queue = waiting.get(endpointId) ?? [];
        waiting.set(endpointId, queue);
        queue.push((taken) => resolve(taken ? take(endpointId) : undefined));
      });
    },
    shed() {
      let shed = 0;
      for (const [endpointId, queue] of waiting) {
        if (queue.length <= perEndpoint || !slow(endpointId)) continue;
        for (const give of queue.splice(perEndpoint)) {
          give(false);
          shed++;
        }
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

function once(run: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    run();
  };
}
