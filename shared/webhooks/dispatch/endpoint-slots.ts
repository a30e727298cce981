/**
 * How many deliveries a dispatcher runs at one endpoint: at most `perEndpoint` HTTP attempts at
 * once (slots, given in the order they were asked for), and at most `perEndpoint` claimed tasks
 * more waiting for one (holds count both). A task is claimed (a write) and its event read before
 * it waits for its slot, so the slot lasts the HTTP attempt only: locally the claim and the read
 * took longer than the attempt, and an endpoint answering in milliseconds got its events at the
 * pace of DynamoDB's round trips.
 */
export interface EndpointSlots {
  /** Whether the endpoint's holds are all taken: its next due task is not claimed now. */
  full(endpointId: string): boolean;
  /** Whether one of the endpoint's attempts has run for `slowAttemptMs` or more. */
  slow(endpointId: string): boolean;
  /** Takes a hold of the endpoint for a task about to be claimed; answers what gives it back (once). */
  hold(endpointId: string): () => void;
  /** Waits for a slot of the endpoint; answers what gives it back (once), to the next task waiting. */
  acquire(endpointId: string): Promise<() => void>;
  /** Resolves when a hold is next given back: the endpoint may take a task more. */
  released(): Promise<void>;
}

export function createEndpointSlots({
  perEndpoint,
  slowAttemptMs,
  now,
}: {
  readonly perEndpoint: number;
  readonly slowAttemptMs: number;
  readonly now: () => number;
}): EndpointSlots {
  const running = new Map<string, Set<{ readonly since: number }>>();
  const waiting = new Map<string, Array<() => void>>();
  const holds = new Map<string, number>();
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
      if (next) next();
      else if (slots.size === 0) running.delete(endpointId);
    });
  }

  return {
    full: (endpointId) => (holds.get(endpointId) ?? 0) >= 2 * perEndpoint,
    slow(endpointId) {
      const at = now();
      for (const slot of running.get(endpointId) ?? []) if (at - slot.since >= slowAttemptMs) return true;
      return false;
    },
    hold(endpointId) {
      holds.set(endpointId, (holds.get(endpointId) ?? 0) + 1);
      return once(() => {
        const left = (holds.get(endpointId) ?? 1) - 1;
        if (left > 0) holds.set(endpointId, left);
        else holds.delete(endpointId);
        holdReleased?.resolve();
        holdReleased = undefined;
      });
    },
    acquire(endpointId) {
      if ((running.get(endpointId)?.size ?? 0) < perEndpoint) return Promise.resolve(take(endpointId));
      return new Promise((resolve) => {
        const queue = waiting.get(endpointId) ?? [];
        waiting.set(endpointId, queue);
        queue.push(() => resolve(take(endpointId)));
      });
    },
    released() {
      holdReleased ??= Promise.withResolvers<void>();
      return holdReleased.promise;
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
