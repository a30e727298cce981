import type { Dispatcher } from './dispatcher.ts';

/**
 * Polls until `signal` aborts (or `until`, epoch ms): at once while there is more; when a poll
 * started nothing, again after `pollMs` or as soon as an endpoint's hold is given back, whichever
 * comes first (the tasks left due for that endpoint can be claimed then). Then lets the attempts
 * in flight finish.
 */
export async function runDispatcher(
  dispatcher: Dispatcher,
  {
    pollMs,
    signal,
    until,
    onError,
  }: { pollMs: number; signal?: AbortSignal; until?: number; onError?: (error: unknown) => void },
): Promise<void> {
  const pause = (ms: number, early?: Promise<void>) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      // An abort during the poll before has fired already, and would not again.
      if (signal?.aborted) done();
      signal?.addEventListener('abort', done);
      void early?.then(done);
    });
  while (!signal?.aborted && (until === undefined || Date.now() < until)) {
    let started = 0;
    try {
      started = await dispatcher.poll();
    } catch (error) {
      onError?.(error);
    }
    if (started === 0) await pause(pollMs, dispatcher.inFlight() > 0 ? dispatcher.freed() : undefined);
  }
  await dispatcher.drain();
}
