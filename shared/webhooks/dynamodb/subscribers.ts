import type { EndpointLookup, SubscriberStore } from '../events/ports.ts';
import { createWebhookEndpointStore } from './endpoint-store.ts';
import type { EventTableAccess } from './event-store.ts';

/** A wallet's endpoints that take a type of event now, from its endpoint set (one read, no secret opened). */
export function createSubscriberStore(access: EventTableAccess): SubscriberStore {
  const endpoints = createWebhookEndpointStore(access);
  return {
    async subscribers(address, type) {
      const set = await endpoints.readEndpoints(address);
      return set.endpoints
        .filter((endpoint) => endpoint.status === 'enabled' && endpoint.eventTypes.includes(type))
        .map((endpoint) => endpoint.id);
    },
  };
}

/** Whether the wallet has the endpoint, and the types it takes: one read of the endpoint set. */
export function createEndpointLookup(access: EventTableAccess): EndpointLookup {
  const endpoints = createWebhookEndpointStore(access);
  return {
    async endpointTypes(address, endpointId) {
      const set = await endpoints.readEndpoints(address);
      return set.endpoints.find((endpoint) => endpoint.id === endpointId)?.eventTypes;
    },
  };
}
