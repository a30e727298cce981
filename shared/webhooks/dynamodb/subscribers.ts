import { readItems } from '../../wallet/dynamodb/consistent-read.ts';
import type { StoredEndpoint } from '../endpoints/ports.ts';
import type { EndpointLookup, SubscriberStore, Subscription } from '../events/ports.ts';
import { createWebhookEndpointStore } from './endpoint-store.ts';
import { BACKGROUND_RETRIES, type EventTableAccess } from './event-store.ts';
import { endpointsKey } from './keys.ts';

/** BatchGetItem takes at most 100 keys. */
const KEYS_PER_READ = 100;

/**
 * The enabled endpoints of wallets, from their endpoint sets: one BatchGetItem per 100 wallets,
 * strongly consistent (an endpoint registered before the payment is told of it), no secret opened.
 */
export function createSubscriberStore(access: EventTableAccess): SubscriberStore {
  return {
    async subscriptions(addresses) {
      const unique = [...new Set(addresses)];
      const found = new Map<string, readonly Subscription[]>();
      for (let at = 0; at < unique.length; at += KEYS_PER_READ) {
        const chunk = unique.slice(at, at + KEYS_PER_READ);
        const items = await readItems(access, chunk.map(endpointsKey), { policy: BACKGROUND_RETRIES });
        for (const address of chunk) {
          const endpoints =
            (items.get(endpointsKey(address))?.endpoints as StoredEndpoint[] | undefined) ?? [];
          found.set(
            address,
            endpoints
              .filter((endpoint) => endpoint.status === 'enabled')
              .map((endpoint) => ({ endpointId: endpoint.id, eventTypes: endpoint.eventTypes })),
          );
        }
      }
      return found;
    },
  };
}

/** Whether the wallet has the endpoint, and its state: one read of the endpoint set. */
export function createEndpointLookup(access: EventTableAccess): EndpointLookup {
  const endpoints = createWebhookEndpointStore(access);
  return {
    async endpointState(address, endpointId) {
      const set = await endpoints.readEndpoints(address);
      const endpoint = set.endpoints.find((one) => one.id === endpointId);
      return endpoint && { status: endpoint.status, healthFrom: endpoint.healthFrom };
    },
  };
}
