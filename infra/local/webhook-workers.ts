/**
 * The webhook events' workers under `npm start`, as the deployed stack runs them
 * (infra/webhook-settings.ts): the deriver (functions/derive-events) on the wallets table's
 * stream through the same local poller as the credit poster, a second reader of each shard as the
 * deployed mapping is, with its own filter and failure file; and the dispatcher
 * (functions/dispatch-webhooks) invoked one short invocation after another, as its schedule does.
 * Both from the sources, in this process; they deliver to real HTTP endpoints (loopback, locally).
 */
import { join } from 'node:path';
import {
  EVENT_DERIVER_FUNCTION_DIR,
  EVENT_DERIVER_NAME,
  EVENT_DERIVER_STREAM,
  WEBHOOK_DISPATCHER,
  WEBHOOK_DISPATCHER_FUNCTION_DIR,
  WEBHOOK_DISPATCHER_NAME,
} from '#infra/webhook-settings.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { DEFAULT_DISPATCHER_SETTINGS } from '#shared/webhooks/dispatch/dispatcher.ts';
import { EVENT_SOURCE_FILTER } from '#shared/webhooks/dynamodb/ledger-facts.ts';
import { loadHandler, withOwnEnvironment } from './invoke.ts';
import {
  type StreamInvoke,
  type StreamPoller,
  type StreamPollerStats,
  startStreamPoller,
} from './stream-poller.ts';

export interface WebhookWorkersOptions {
  /** DynamoDB Local itself, whose stream the deriver reads. */
  readonly streamEndpoint: string;
  readonly walletsTable: string;
  /** Each worker's environment, as its template would give it. */
  readonly deriverEnv: Readonly<Record<string, string>>;
  readonly dispatcherEnv: Readonly<Record<string, string>>;
  /** Every function's variables together (see `withOwnEnvironment`). */
  readonly allEnv: Readonly<Record<string, string>>;
  readonly failureFile: string;
  readonly log?: (line: string) => void;
}

export interface WebhookWorkers {
  readonly failureFile: string;
  deriverStats(): StreamPollerStats;
  stop(): Promise<void>;
}

type DispatchHandler = (event: unknown, context: { getRemainingTimeInMillis(): number }) => Promise<void>;

export async function startWebhookWorkers(options: WebhookWorkersOptions): Promise<WebhookWorkers> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const derive = (await withOwnEnvironment(options.deriverEnv, options.allEnv, () =>
    loadHandler(EVENT_DERIVER_FUNCTION_DIR),
  )) as StreamInvoke;
  const dispatch = (await withOwnEnvironment(options.dispatcherEnv, options.allEnv, () =>
    loadHandler(WEBHOOK_DISPATCHER_FUNCTION_DIR),
  )) as DispatchHandler;
  const poller: StreamPoller = await startStreamPoller({
    endpoint: options.streamEndpoint,
    tableName: options.walletsTable,
    invoke: derive,
    failureFile: options.failureFile,
    settings: EVENT_DERIVER_STREAM,
    filter: EVENT_SOURCE_FILTER,
    log: (line) => log(line.replace('stream poller', 'event deriver')),
  });
  // The handler stops claiming one lease before its time ends: each local invocation claims for a
  // few seconds.
  const leaseMs = Number(options.dispatcherEnv.WEBHOOK_LEASE_MS ?? DEFAULT_DISPATCHER_SETTINGS.leaseMs);
  const context = {
    getRemainingTimeInMillis: () => leaseMs + WEBHOOK_DISPATCHER.localInvocationSeconds * 1000,
  };
  const dispatching = startDispatcherSchedule(() => dispatch({}, context), {
    everyMs: WEBHOOK_DISPATCHER.localInvocationSeconds * 1000,
    log,
  });
  return {
    failureFile: options.failureFile,
    deriverStats: () => poller.stats(),
    async stop() {
      await poller.stop();
      await dispatching.stop();
    },
  };
}

/**
 * The dispatcher's schedule under `npm start`, as EventBridge runs it on AWS: an invocation at once
 * and then every `everyMs`, each started whether or not the one before has ended. An invocation
 * stops claiming at its end but waits for its attempts in flight (up to their 15 s timeout); run
 * one after another, an endpoint that never answers held every other endpoint's deliveries for as
 * long at each invocation's end. Returns what stops it, once the invocations running have ended.
 */
export function startDispatcherSchedule(
  invoke: () => Promise<unknown>,
  { everyMs, log }: { everyMs: number; log: (line: string) => void },
): { stop(): Promise<void> } {
  const running = new Set<Promise<void>>();
  const start = () => {
    const invocation = invoke().then(
      () => undefined,
      (error: unknown) =>
        log(`webhook dispatcher: ${error instanceof Error ? error.message : String(error)}`),
    );
    running.add(invocation);
    void invocation.finally(() => running.delete(invocation));
  };
  start();
  const timer = setInterval(start, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}

/** What the local stack knows when it starts the workers. */
export interface LocalWebhookWorkersOptions {
  readonly stateDir: string;
  readonly port: number;
  readonly streamEndpoint: string;
  readonly tableNames: Readonly<Record<'wallets' | 'webhooks', string>>;
  readonly allEnv: Readonly<Record<string, string>>;
  /** What every function gets, with the webhook functions' key and destination rule. */
  readonly common: Readonly<Record<string, string>>;
  readonly walletEnv: Readonly<Record<string, string>>;
  /** A function's own endpoint at the proxy that shares DynamoDB Local. */
  readonly ownEndpoint: (id: string) => Record<string, string>;
  readonly log?: (line: string) => void;
}

/** Starts the workers with the environment each one's template gives it. */
export function startLocalWebhookWorkers(options: LocalWebhookWorkersOptions): Promise<WebhookWorkers> {
  const { tableNames, common } = options;
  const schedule = process.env.WEBHOOK_RETRY_SCHEDULE;
  return startWebhookWorkers({
    streamEndpoint: options.streamEndpoint,
    walletsTable: tableNames.wallets,
    deriverEnv: {
      ...common,
      ...options.walletEnv,
      ...options.ownEndpoint(EVENT_DERIVER_NAME),
      [tables.wallets.envVar]: tableNames.wallets,
      [tables.webhooks.envVar]: tableNames.webhooks,
    },
    dispatcherEnv: {
      ...common,
      ...options.ownEndpoint(WEBHOOK_DISPATCHER_NAME),
      [tables.webhooks.envVar]: tableNames.webhooks,
      // The developer's shortened schedule (tests run the whole schedule in seconds).
      ...(schedule ? { WEBHOOK_RETRY_SCHEDULE: schedule } : {}),
      ...(process.env.WEBHOOK_LEASE_MS ? { WEBHOOK_LEASE_MS: process.env.WEBHOOK_LEASE_MS } : {}),
    },
    allEnv: options.allEnv,
    failureFile: join(options.stateDir, `event-deriver-failures-${options.port}.jsonl`),
    ...(options.log === undefined ? {} : { log: options.log }),
  });
}
