import type { WebhookEventType } from '../model/event-types.ts';
import type { WebhookEvent } from '../model/webhook-event.ts';

/** A delivery to do, as the dispatcher reads it from the `due` index. */
export interface DeliveryTask {
  readonly kind: 'task';
  /** Its item key: what claims and outcomes are written to. */
  readonly key: string;
  readonly eventId: string;
  readonly eventType: WebhookEventType;
  readonly address: string;
  readonly endpointId: string;
  /** The event itself, when the task carries its body (a short one); otherwise it is read by id. */
  readonly event?: WebhookEvent | undefined;
  readonly trigger: 'schedule' | 'replay' | 'redeliver';
  /** Attempts made so far. */
  readonly attempts: number;
  /** Epoch ms at which it is due: the version a claim is conditional on. */
  readonly dueAt: number;
}

/** A replay being expanded into tasks: the wallet's events since `since`, after `cursor`. */
export interface ReplayTask {
  readonly kind: 'replay';
  readonly key: string;
  readonly address: string;
  readonly endpointId: string;
  readonly replayId: string;
  readonly since: string;
  /** The `eventKey` of the last event expanded, if any. */
  readonly cursor?: string | undefined;
  readonly dueAt: number;
}

export type DueWork = DeliveryTask | ReplayTask;

/** How a task ended: `delivered`, or not to be tried again (endpoint gone or disabled, schedule spent, event expired). */
export type TaskEnd = 'delivered' | 'endpoint-disabled' | 'gave-up' | 'event-expired';

/** What one poll read of the due work. */
export interface DuePage {
  /** Up to the poll's limit, oldest first. */
  readonly works: readonly DueWork[];
  /** Whether more was due than was read: the works read may hide others' behind them. */
  readonly more: boolean;
}

/** What the dispatcher needs of the tasks (implemented by ../dynamodb/task-store.ts). */
export interface TaskStore {
  /** Up to `limit` tasks due at `now`, oldest first per shard, every shard read. */
  due(now: number, limit: number): Promise<DuePage>;
  /**
   * Takes each of `works` until `leaseUntil` (epoch ms; one for all, or one per work, in order),
   * many in one request: its `dueAt` moves there, on condition that it is still what was read.
   * Whether each was claimed, in order: not when another dispatcher took it, or it is done.
   */
  claimAll(works: readonly DueWork[], leaseUntil: number | readonly number[]): Promise<readonly boolean[]>;
  /**
   * Ends a claimed task (out of the `due` index), on condition that the lease is still ours; a
   * `delivered` one whatever holds it now (delivered is final).
   */
  finish(task: DeliveryTask, leaseUntil: number, end: TaskEnd, now: string): Promise<void>;
  /** Makes a claimed task due again at `dueAt`, after `attempts` attempts (0 more for a deferral). */
  reschedule(work: DueWork, leaseUntil: number, dueAt: number, attempts?: number): Promise<void>;
  /**
   * Expands up to `limit` events of the replay (of `eventTypes`) into tasks and moves its cursor,
   * on condition that the lease is still ours; `true` when no event is left (the replay is done).
   */
  expandReplay(
    replay: ReplayTask,
    leaseUntil: number,
    eventTypes: readonly WebhookEventType[],
    limit: number,
  ): Promise<boolean>;
}
