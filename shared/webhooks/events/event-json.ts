import type { WebhookEvent } from '../model/webhook-event.ts';

/**
 * An event as the events API answers it: `{id, type, timestamp, data}`, the numbers exactly as the
 * delivered body wrote them (its amounts are exact decimals: parsed into floats and written again
 * they could change).
 */
export function eventJson(event: WebhookEvent): Record<string, unknown> {
  const body = JSON.parse(event.body, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? JSON.rawJSON(context.source) : value,
  ) as Record<string, unknown>;
  return { id: event.id, ...body };
}
