/**
 * How the webhook events are derived and dispatched: the ONE place for the settings the deployed
 * resources (infra/constructs/webhook-events.ts) and the local stack of `npm start`
 * (infra/local/webhook-workers.ts) both use. No CDK import: the local stack loads it too.
 * Why each value: docs/decisions/webhooks.md.
 */
import { CREDIT_POSTER_STREAM, type CreditPosterStreamSettings } from './credit-poster-settings.ts';

/** The construct id of the deriver in the service stack. */
export const EVENT_DERIVER_NAME = 'EventDeriver';
export const EVENT_DERIVER_FUNCTION_DIR = 'derive-events';

/** The construct id of the dispatcher in the service stack. */
export const WEBHOOK_DISPATCHER_NAME = 'WebhookDispatcher';
export const WEBHOOK_DISPATCHER_FUNCTION_DIR = 'dispatch-webhooks';

/**
 * The deriver's event source mapping on the wallets table's stream: the second and last reader of
 * each shard (the credit poster is the first). Like the poster's, but its own function's time.
 */
export const EVENT_DERIVER_STREAM: CreditPosterStreamSettings = {
  ...CREDIT_POSTER_STREAM,
  /** A batch's events go 100 actions to a transaction, 4 at once: 1,000 records take a few seconds at most. */
  functionTimeoutSeconds: 60,
};

export const WEBHOOK_DISPATCHER = {
  /** The schedule invokes it every minute; each invocation polls until shortly before its timeout. */
  scheduleMinutes: 1,
  /**
   * One invocation: its minute of polling, then one lease (30 s), which holds the last claimed
   * task's wait for a slot, its attempt (15 s) and its records.
   */
  functionTimeoutSeconds: 90,
  /** Locally, invocations of a few seconds one after another: `npm start` stops within that. */
  localInvocationSeconds: 5,
  /**
   * The most dispatchers that run at once, reserved as the function's concurrency: a tick's
   * invocation and the one before it, still ending its attempts (90 s over a 60 s tick). A late or
   * queued invocation waits for one of them instead of making a third, and none is retried
   * (`retryAttempts: 0`: the next tick is a minute away). With each dispatcher's cap of
   * `DEFAULT_DISPATCHER_SETTINGS.perEndpoint` (4), an endpoint has at most 8 attempts in flight.
   */
  concurrentInvocations: 2,
  /**
   * How long Lambda keeps a tick it could not start (throttled) before dropping it: one tick, the
   * least Lambda allows, since the next tick is due by then and polls the same tasks. Lambda's
   * default, 6 hours, re-queued throttled ticks for hours, to run long after they meant anything.
   */
  maxEventAgeSeconds: 60,
} as const;
