/**
 * DynamoDB Local's capacity, shared among its callers (the local stack's functions), since it
 * serves every request in one queue where DynamoDB serves each function's partitions apart: at
 * most `slots` requests reach it at once, and the requests waiting for a slot are served one caller
 * after another (round robin). A caller with a hundred requests waiting then delays another
 * caller's one by a round, not by the hundred. Within its turn a caller's reads go before its own
 * writes waiting (each kind in the order it came), a write passed by at most
 * {@link READS_MAY_PASS} reads: on DynamoDB neither would wait for the other, and a function that
 * writes behind (the webhook dispatcher's records) held back its own next read (its poll).
 * Why: docs/decisions/local-dynamodb-share.md.
 */

/**
 * How many of its caller's reads may be served before a write that waits: a bound, so that a
 * caller whose reads keep coming still gets its writes through.
 */
export const READS_MAY_PASS = 32;

/** The operations that only read, which a caller's turn serves before its writes. */
const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

/** Whether a request of `operation` (the X-Amz-Target's action) only reads. */
export const isRead = (operation: string | undefined): boolean =>
  operation !== undefined && READS.has(operation);

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
  /** The callers with requests waiting, in the order they are served next; each one's in the order it is served. */
  readonly #waiting = new Map<string, Waiting[]>();

  constructor(slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`slots must be a positive integer: ${slots}`);
    this.#slots = slots;
  }

  /**
   * Resolves once `caller` may send a request (`read` when it only reads); call the function it
   * gives when the answer is back.
   */
  async acquire(caller: string, read = false): Promise<() => void> {
    if (this.#busy < this.#slots && this.#waiting.size === 0) this.#busy++;
    else {
      await new Promise<void>((resolve) => {
        const waiting: Waiting = { resolve, read, passedBy: 0 };
        const queue = this.#waiting.get(caller);
        if (!queue) this.#waiting.set(caller, [waiting]);
        else if (!read) queue.push(waiting);
        else {
          // After the reads before it and the writes passed enough already; ahead of the rest.
          const at = queue.findLastIndex((other) => other.read || other.passedBy >= READS_MAY_PASS) + 1;
          for (const passed of queue.slice(at)) passed.passedBy++;
          queue.splice(at, 0, waiting);
        }
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
    const { resolve } = queue.shift() as Waiting;
    if (queue.length > 0) this.#waiting.set(caller, queue);
    resolve();
  }
}

interface Waiting {
  readonly resolve: () => void;
  readonly read: boolean;
  /** How many reads of its caller were put ahead of it (writes only). */
  passedBy: number;
}
