/**
 * DynamoDB Local's capacity, shared among its callers (the local stack's functions), since it
 * serves every request in one queue where DynamoDB serves each function's partitions apart: at
 * most `slots` requests reach it at once, and the requests waiting for a slot are served one caller
 * after another (round robin), each caller's own in the order they came. A caller with a hundred
 * requests waiting then delays another caller's one by a round, not by the hundred.
 * Why: docs/decisions/local-dynamodb-share.md.
 */

/** Where a caller sends its requests, so that the proxy knows whose they are: `<proxy>/callers/<name>`. */
export function callerEndpoint(proxyEndpoint: string, caller: string): string {
  return `${proxyEndpoint}/callers/${encodeURIComponent(caller)}`;
}

/** The caller a request path names (`/callers/<name>/…`), or '' for any other path. */
export function callerOf(path: string): string {
  const match = /^\/callers\/([^/]+)/.exec(path);
  return match ? decodeURIComponent(match[1] as string) : '';
}

export class CallerShare {
  readonly #slots: number;
  #busy = 0;
  /** The callers with requests waiting, in the order they are served next. */
  readonly #waiting = new Map<string, Array<() => void>>();

  constructor(slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`slots must be a positive integer: ${slots}`);
    this.#slots = slots;
  }

  /** Resolves once `caller` may send a request; call the function it gives when the answer is back. */
  async acquire(caller: string): Promise<() => void> {
    if (this.#busy < this.#slots && this.#waiting.size === 0) this.#busy++;
    else {
      await new Promise<void>((resolve) => {
        const queue = this.#waiting.get(caller);
        if (queue) queue.push(resolve);
        else this.#waiting.set(caller, [resolve]);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release();
    };
  }

  /** Hands the slot to the next caller's oldest request, which moves that caller to the back. */
  #release(): void {
    const next = this.#waiting.entries().next();
    if (next.done) {
      this.#busy--;
      return;
    }
    const [caller, queue] = next.value;
    this.#waiting.delete(caller);
    const resolve = queue.shift() as () => void;
    if (queue.length > 0) this.#waiting.set(caller, queue);
    resolve();
  }
}
