import { randomBytes } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createDispatchHandler, createWebhookDispatcher } from '#functions/dispatch-webhooks/handler.ts';
import { DEFAULT_DISPATCHER_SETTINGS } from '#shared/webhooks/dispatch/dispatcher.ts';
import { createEnvelopeSealer } from '#shared/webhooks/secrets/envelope.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';
import { linesWrittenBy, metricLines } from '../support/logs.ts';
import { loopbackDeliver } from '../support/webhook-dispatcher.ts';

/*
 * The dispatcher's lag metric (functions/dispatch-webhooks/handler.ts), which the
 * `webhooks-oldest-undelivered` alarm reads, missing data breaching: an invocation whose polls of
 * the due tasks all failed publishes no age, rather than a 0 that says nothing waits.
 */

const leaseMs = DEFAULT_DISPATCHER_SETTINGS.leaseMs;
const sealer = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));

/** A client whose every request DynamoDB refuses (not retried), or answers with no items. */
const clientThat = (answer: 'refuses' | 'finds-nothing') =>
  ({
    send: async () => {
      if (answer === 'finds-nothing') return { Items: [] };
      throw Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
    },
  }) as unknown as DynamoDBDocumentClient;

async function agesPublishedBy(answer: 'refuses' | 'finds-nothing'): Promise<unknown[]> {
  const dispatcher = createWebhookDispatcher({
    client: clientThat(answer),
    tableName: 'unused',
    sealer,
    mode: 'local',
    schedule: [0],
    deliver: loopbackDeliver(),
  });
  const handler = createDispatchHandler(dispatcher, { leaseMs, pollMs: 20 });
  // Time for a few polls before the last lease.
  const lines = await linesWrittenBy(() => handler({}, { getRemainingTimeInMillis: () => leaseMs + 100 }));
  return metricLines(lines)
    .filter((line) => 'OldestDueTaskAgeMs' in line)
    .map((line) => line.OldestDueTaskAgeMs);
}

describe('the dispatcher invocation', () => {
  it('publishes how long the oldest due task has waited when its polls answer', async () => {
    expect(await agesPublishedBy('finds-nothing')).toEqual([0]);
  });

  it('publishes no age when no poll of the due tasks answered, so that the lag alarm reads it as down', async () => {
    expect(await agesPublishedBy('refuses')).toEqual([]);
  });
});
