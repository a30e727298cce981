import type { DeliveryTask, DueWork, TaskStore } from '#shared/webhooks/dispatch/ports.ts';

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

/** Tasks 0 to `count` - 1 of `endpointId`, as {@link deliveryTask} makes them, numbered from `from`. */
export const tasksOf = (endpointId: string, count: number, from = 0): DeliveryTask[] =>
  Array.from({ length: count }, (_, n) => deliveryTask(from + n, endpointId));

/**
 * A task store in memory for a dispatcher's unit tests: the due tasks oldest first (in the given
 * order when due at once), claims conditional on the due time read, as the DynamoDB store's are;
 * what each claim call and reschedule wrote.
 */
export function memoryTasks(tasks: readonly DeliveryTask[]) {
  const dueAt = new Map<string, number>();
  for (const task of tasks) dueAt.set(task.key, task.dueAt);
  const claimCalls: { keys: string[]; until: number[] }[] = [];
  const rescheduled = new Map<string, number>();
  const claimOne = (work: DueWork, until: number) => {
    if (dueAt.get(work.key) !== work.dueAt) return false;
    dueAt.set(work.key, until);
    return true;
  };
  const store: TaskStore = {
    async due(now, limit) {
      const due = tasks
        .filter((task) => (dueAt.get(task.key) as number) <= now)
        .map((task) => ({ ...task, dueAt: dueAt.get(task.key) as number }))
        .sort((a, b) => a.dueAt - b.dueAt);
      return { works: due.slice(0, limit), more: due.length > limit };
    },
    async claimAll(works, leaseUntil) {
      const until = works.map((_, at) =>
        typeof leaseUntil === 'number' ? leaseUntil : (leaseUntil[at] as number),
      );
      claimCalls.push({ keys: works.map((work) => work.key), until });
      return works.map((work, at) => claimOne(work, until[at] as number));
    },
    async finish() {},
    async reschedule(work, _lease, at) {
      rescheduled.set(work.key, at);
      dueAt.set(work.key, at);
    },
    async expandReplay() {
      return true;
    },
  };
  return { store, claimCalls, rescheduled };
}
