import type { DeliveryEndpointStore } from '#shared/webhooks/model/ports.ts';

/**
 * An endpoint store for a dispatcher's unit tests: every endpoint is enabled, on loopback, and
 * stays healthy whatever is recorded; `onRead` sees each read of one.
 */
export function enabledEndpoints(
  onRead: (address: string, endpointId: string) => void = () => undefined,
): DeliveryEndpointStore {
  return {
    endpointsFor: async () => [],
    endpointOf: async (address, endpointId) => {
      onRead(address, endpointId);
      return {
        endpointId,
        address,
        url: 'http://127.0.0.1:9/hooks',
        eventTypes: ['transfer.received'],
        status: 'enabled',
        secrets: [],
      };
    },
    recordAttempt: async () => ({ status: 'enabled', disabledNow: false }),
  };
}
