import { SWEEP_EVERY_MS } from '#shared/wallet/hot-wallet/sweep-batches.ts';
import { loadHandler, withOwnEnvironment } from './invoke.ts';

/** The sweep's handler, as functions/sweep-batches exports it. */
export type SweepInvoke = () => Promise<unknown>;

/** The sweep's handler from the sources, imported with its own variables (`own`) of the stack's (`all`). */
export const loadSweep = async (own: Record<string, string>, all: Record<string, string>) =>
  (await withOwnEnvironment(own, all, () => loadHandler('sweep-batches'))) as SweepInvoke;

/**
 * The schedule EventBridge gives the sweep on AWS (infra/constructs/batch-sweep.ts), for
 * `npm start`: the same handler every `every` ms, one run at a time, a failed run logged and not
 * retried (the next one comes). Returns what stops it, after the run in progress.
 */
export function startScheduledSweep(
  invoke: SweepInvoke,
  {
    every = SWEEP_EVERY_MS,
    log = (line: string) => void process.stderr.write(`${line}\n`),
  }: { every?: number; log?: ((line: string) => void) | undefined } = {},
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() =>
      invoke().then(
        () => undefined,
        (error: unknown) => log(`sweep failed: ${error instanceof Error ? error.message : String(error)}`),
      ),
    );
  }, every);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
