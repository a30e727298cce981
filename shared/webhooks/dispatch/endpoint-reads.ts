/**
 * The endpoints as a dispatcher has read them (issue 46): a read serves the attempts of the next
 * second, and carries the number of the polls answered when it was sent, so that an attempt can
 * ask for a read newer than the poll that found its task.
 */
import type { DeliveryEndpointStore } from '../model/ports.ts';

/**
 * How long an endpoint as read (its URL, secrets, status) serves the attempts that follow: a busy
 * endpoint's deliveries then cost one read (and one opening of its secrets) a second, not one each.
 * A change by its owner (disabled, rotated, moved) reaches its live deliveries within this; a
 * replay or redelivery, and enabling it again, at once (neither is served a read older than the
 * poll that found the task).
 */
export const ENDPOINT_FRESH_MS = 1_000;

/** How many endpoints' reads a dispatcher keeps. */
const ENDPOINTS_KEPT = 1_000;

export function createEndpointReads(
  endpoints: Pick<DeliveryEndpointStore, 'endpointOf'>,
  clock: { now(): number },
) {
  const reads = new Map<
    string,
    {
      readonly at: number;
      /** The polls answered when the read was sent: a task found by a later poll may postdate it. */
      readonly polls: number;
      readonly endpoint: ReturnType<DeliveryEndpointStore['endpointOf']>;
    }
  >();
  /** How many polls have been answered their due page. */
  let polls = 0;
  const keyOf = (address: string, endpointId: string) => JSON.stringify([address, endpointId]);

  return {
    /** A poll has been answered its due page: its number, which the reads sent from now on carry. */
    pollAnswered: (): number => ++polls,

    /** The endpoint as read within ENDPOINT_FRESH_MS, and sent after poll `after` was answered. */
    read(address: string, endpointId: string, after = 0) {
      const key = keyOf(address, endpointId);
      const known = reads.get(key);
      if (known && known.polls >= after && clock.now() - known.at < ENDPOINT_FRESH_MS) return known.endpoint;
      const endpoint = endpoints.endpointOf(address, endpointId);
      if (reads.size >= ENDPOINTS_KEPT) reads.delete(reads.keys().next().value as string);
      reads.set(key, { at: clock.now(), polls, endpoint });
      // A failed read is not kept (a newer one that replaced it stays).
      endpoint.catch(() => {
        if (reads.get(key)?.endpoint === endpoint) reads.delete(key);
      });
      return endpoint;
    },

    /** Forgets the endpoint as read: its health has changed. */
    forget(address: string, endpointId: string): void {
      reads.delete(keyOf(address, endpointId));
    },
  };
}
