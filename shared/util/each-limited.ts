/**
 * Runs `task` on every item, at most `limit` at once, each of them even when another fails; then
 * throws the first failure, if any. For work whose items stand on their own (accounts an audit
 * reads again, batches a poster completes): a failure leaves the others done, not abandoned
 * half-way, and a few hundred items never mean a few hundred requests in flight from one process.
 */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item).catch((error: unknown) => void failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
}
