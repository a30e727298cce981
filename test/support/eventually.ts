import { setTimeout as sleep } from 'node:timers/promises';

/** Waits until `check` holds, checking every 100 ms, or fails naming `what` after `ms`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  ms: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}
