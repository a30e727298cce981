import type { DeliveryTask } from '#shared/webhooks/dispatch/ports.ts';

/** Delivery task `n` of the shop's `transfer.received` event `evt_<n>` to `endpointId`, due since 0, carrying its body. */
export const deliveryTask = (n: number, endpointId: string): DeliveryTask => ({
  kind: 'task',
  key: `TASK#${n}`,
  eventId: `evt_${n}`,
  eventType: 'transfer.received',
  address: 'shop',
  endpointId,
  event: { id: `evt_${n}`, type: 'transfer.received', address: 'shop', timestamp: '', body: '{}' },
  trigger: 'schedule',
  attempts: 0,
  dueAt: 0,
});
