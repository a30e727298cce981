import { randomUUID } from 'node:crypto';
import { createEventStore, type EventTableAccess } from '#shared/webhooks/dynamodb/event-store.ts';
import { eventIdOf, type WebhookEvent } from '#shared/webhooks/model/webhook-event.ts';

/**
 * A wallet's `transfer.received` events `agesMs` old, stored as the deriver stores them (their
 * `expiresAt` with them), with no delivery task.
 */
export async function storedEvents(
  access: EventTableAccess,
  address: string,
  agesMs: readonly number[],
): Promise<WebhookEvent[]> {
  const events = agesMs.map((age) => {
    const timestamp = new Date(Date.now() - age).toISOString();
    return {
      id: eventIdOf('transfer.received', randomUUID()),
      type: 'transfer.received' as const,
      address,
      timestamp,
      body: JSON.stringify({ type: 'transfer.received', timestamp, data: { address } }),
    };
  });
  const outcomes = await createEventStore(access).recordAll(
    events.map((event) => ({ event, endpointIds: [] })),
  );
  if (outcomes.some((outcome) => outcome !== 'recorded'))
    throw new Error(`not stored: ${JSON.stringify(outcomes)}`);
  return events;
}
