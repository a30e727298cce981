import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { optionalEnv, requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';
import { createHttpDeliver } from '#shared/webhooks/delivery/http-delivery.ts';
import { runDispatcher } from '#shared/webhooks/dispatch/dispatch-loop.ts';
import {
  DEFAULT_DISPATCHER_SETTINGS,
  type Dispatcher,
  type DispatchObservation,
  makeDispatcher,
} from '#shared/webhooks/dispatch/dispatcher.ts';
import { createDeliveryEndpointStore } from '#shared/webhooks/dynamodb/endpoint-store.ts';
import { BACKGROUND_RETRIES, createEventStore } from '#shared/webhooks/dynamodb/event-store.ts';
import { createPutBatcher } from '#shared/webhooks/dynamodb/put-batcher.ts';
import { createTaskStore } from '#shared/webhooks/dynamodb/task-store.ts';
import type { Deliver } from '#shared/webhooks/model/delivery.ts';
import type { DestinationMode } from '#shared/webhooks/model/destination.ts';
import { destinationModeFromEnv } from '#shared/webhooks/model/destination-mode.ts';
import { retryScheduleFrom } from '#shared/webhooks/model/retry-schedule.ts';
import type { SecretSealer } from '#shared/webhooks/secrets/envelope.ts';
import { secretSealerFromEnv } from '#shared/webhooks/secrets/keeper.ts';

/** How often an idle dispatcher reads the due tasks: a first attempt goes out within about this. */
export const DISPATCH_POLL_MS = 250;

export interface DispatcherDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly sealer: SecretSealer;
  readonly mode: DestinationMode;
  readonly schedule: readonly number[];
  /** The HTTP attempt; the signed client of shared/webhooks/delivery unless a test gives another. */
  readonly deliver?: Deliver;
  readonly leaseMs?: number;
}

/** The composition root of the dispatcher: its stores on the webhooks table, the HTTP client, the metrics. */
export function createWebhookDispatcher(deps: DispatcherDependencies): Dispatcher & {
  /**
   * The longest any task waited past its due time since the last call, then reset: one metric per
   * invocation. Undefined when no poll answered since (its `due` Queries all failed): a 0 then would
   * say that nothing waits, and keep the lag alarm, whose missing data breaches, from firing.
   */
  takeLag(): number | undefined;
} {
  const { client, tableName } = deps;
  const metrics = routeMetrics('dispatch-webhooks');
  let lag: number | undefined;
  const observe = (observation: DispatchObservation) => {
    switch (observation.kind) {
      case 'lag':
        lag = Math.max(lag ?? 0, observation.oldestDueMs);
        return;
      case 'attempt':
        publish(metrics, [
          ['WebhookAttempts', 1],
          [observation.outcome === 'delivered' ? 'WebhookDeliveries' : 'WebhookFailures', 1],
        ]);
        return;
      case 'disabled':
        publish(metrics, [['WebhookEndpointsDisabled', 1]]);
        return;
      case 'ended':
        if (observation.end === 'gave-up') publish(metrics, [['WebhookTasksGivenUp', 1]]);
        return;
      case 'failed':
        logger.error('A delivery task failed; it is due again when its lease lapses', {
          errorName: (observation.error as Error | undefined)?.name,
        });
        return;
    }
  };
  // One batcher for both stores: a delivery's record and its task's end go in one request.
  const puts = createPutBatcher({ client, tableName, policy: BACKGROUND_RETRIES });
  const dispatcher = makeDispatcher({
    tasks: createTaskStore({ client, tableName, puts }),
    events: createEventStore({ client, tableName }),
    endpoints: createDeliveryEndpointStore({
      client,
      tableName,
      sealer: deps.sealer,
      clock: systemClock,
      puts,
    }),
    deliver: deps.deliver ?? createHttpDeliver({ mode: deps.mode }),
    clock: systemClock,
    settings: {
      ...DEFAULT_DISPATCHER_SETTINGS,
      schedule: deps.schedule,
      ...(deps.leaseMs === undefined ? {} : { leaseMs: deps.leaseMs }),
    },
    observe,
  });
  return {
    ...dispatcher,
    takeLag() {
      const taken = lag;
      lag = undefined;
      return taken;
    },
  };
}

const leaseMs = Number(optionalEnv('WEBHOOK_LEASE_MS') ?? DEFAULT_DISPATCHER_SETTINGS.leaseMs);

const dispatcher = createWebhookDispatcher({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.webhooks.envVar),
  sealer: secretSealerFromEnv(),
  mode: destinationModeFromEnv(),
  schedule: retryScheduleFrom(process.env),
  leaseMs,
});

const invocationMetrics = routeMetrics('dispatch-webhooks');

/**
 * The dispatcher's invocation, invoked every minute by a schedule: polls the due tasks until one
 * lease before its timeout, so that one invocation follows the other (docs/decisions/webhooks.md,
 * "Dispatching"). A task claimed last waits, is attempted and recorded within its lease
 * (`DispatcherSettings.leaseMs`), so within the function's time.
 */
export function createDispatchHandler(
  dispatcher: ReturnType<typeof createWebhookDispatcher>,
  { leaseMs, pollMs = DISPATCH_POLL_MS }: { readonly leaseMs: number; readonly pollMs?: number },
) {
  return async (_event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<void> => {
    await runDispatcher(dispatcher, {
      pollMs,
      until: Date.now() + context.getRemainingTimeInMillis() - leaseMs,
      onError: (error) => logger.error('Polling the due tasks failed', { errorName: (error as Error).name }),
    });
    // Once per invocation (a minute): the alarm on undelivered events reads its maximum, and
    // reads no datapoint as the dispatcher down, so an invocation that could not read the due tasks
    // publishes none.
    const lag = dispatcher.takeLag();
    if (lag !== undefined) publish(invocationMetrics, [['OldestDueTaskAgeMs', lag]]);
  };
}

export const handler = createDispatchHandler(dispatcher, { leaseMs });
