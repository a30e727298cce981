import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Admission,
  ConflictTracker,
  cancellation,
  isConflictAnswer,
  type TouchCount,
  type TouchReportEntry,
} from './dynamodb-conflicts.ts';
import { ANSWERED_IN_PLACE, type Fault, type FaultRule, type ProxiedRequest } from './dynamodb-faults.ts';
import { KeySchemas, namedItems } from './dynamodb-items.ts';
import { localClient } from './dynamodb-local.ts';
import { CallerShare, callerOf, isRead } from './dynamodb-share.ts';

/*
 * An HTTP proxy in front of DynamoDB Local, for `npm start` and the tests. The functions' SDK
 * talks to it through DYNAMODB_ENDPOINT, so whatever it does happens beneath the SDK's middleware,
 * on the wire, where it happens on AWS: the SDK parses a real error answer or meets a real broken
 * socket. What it adds, alone or together:
 * - faults a test injects (`inject`, the kinds in `dynamodb-faults.ts`): throttling, 500s, resets,
 *   stalls, lost answers, …;
 * - with `conflicts`, DynamoDB's transaction conflicts, which DynamoDB Local never raises
 *   (`dynamodb-conflicts.ts`), and a count of the write attempts that named each item;
 * - with `callerSlots`, DynamoDB Local shared among the callers that name themselves in the
 *   endpoint's path (`dynamodb-share.ts`).
 */

const select = (
  list: readonly ProxiedRequest[],
  operation: string | undefined,
  when: ((request: ProxiedRequest) => boolean) | undefined,
) => list.filter((r) => (operation === undefined || r.operation === operation) && (when?.(r) ?? true));

interface ActiveRule {
  readonly fault: Fault;
  readonly matches: (request: ProxiedRequest) => boolean;
  remaining: number;
}

export interface DynamoDbProxyOptions {
  /**
   * Behave as DynamoDB does under contention (`dynamodb-conflicts.ts`): a transaction naming an
   * item a write has in flight is cancelled, a plain write on an item in a transaction in flight
   * fails; and count touches per item.
   */
  readonly conflicts?: boolean;
  /**
   * At most this many requests at DynamoDB Local at once, the waiting ones served one caller after
   * another (`dynamodb-share.ts`); unset, every request is forwarded at once.
   */
  readonly callerSlots?: number;
  /** Port to listen on; any free one when absent. */
  readonly port?: number;
  /**
   * Keep every request for {@link DynamoDbProxy.requests} and {@link DynamoDbProxy.answered}, as
   * tests do (the default); a long-running stack turns it off, or its memory grows without end.
   */
  readonly record?: boolean;
}

const JSON_TYPE = 'application/x-amz-json-1.0';

/** DynamoDB Local's answer to a forwarded request. */
interface UpstreamAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Where the proxy answers its touch report (GET) and forgets it (DELETE), for a process other than
 * the one running it (the bench against `npm start`). DynamoDB's API is POST / only.
 */
export const TOUCHES_PATH = '/proxy/touches';

export class DynamoDbProxy {
  readonly endpoint: string;
  readonly #server: ReturnType<typeof createServer>;
  readonly #upstream: URL;
  readonly #requests: ProxiedRequest[] = [];
  readonly #answered: ProxiedRequest[] = [];
  readonly #conflicts: { tracker: ConflictTracker; schemas: KeySchemas; close(): void } | undefined;
  readonly #record: boolean;
  readonly #share: CallerShare | undefined;
  #rules: ActiveRule[] = [];

  private constructor(server: ReturnType<typeof createServer>, upstream: URL, options: DynamoDbProxyOptions) {
    this.#server = server;
    this.#upstream = upstream;
    this.#record = options.record ?? true;
    this.#share = options.callerSlots === undefined ? undefined : new CallerShare(options.callerSlots);
    const conflicts = options.conflicts ?? false;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (conflicts) {
      const client = localClient(upstream.href);
      this.#conflicts = {
        tracker: new ConflictTracker(),
        schemas: new KeySchemas(client),
        close: () => client.destroy(),
      };
    }
  }

  /** Starts a proxy on a local port in front of `upstream` (DynamoDB Local's endpoint). */
  static async start(upstream: string, options: DynamoDbProxyOptions = {}): Promise<DynamoDbProxy> {
    let proxy: DynamoDbProxy | undefined;
    const server = createServer((req, res) => {
      proxy?.handle(req, res).catch(() => res.socket?.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    proxy = new DynamoDbProxy(server, new URL(upstream), options);
    return proxy;
  }

  /**
   * How often the item `key` (plain values, e.g. `{ pk: 'WALLET#alice' }`) of `table` was named by
   * a write attempt since the last {@link resetTouches}: written, or named in one that failed.
   * Counted in conflict mode only.
   */
  touches(table: string, key: Record<string, unknown>): TouchCount {
    return this.#tracker().touches(table, key);
  }

  /** Every touched item, the most touched first. */
  touchReport(): TouchReportEntry[] {
    return this.#tracker().touchReport();
  }

  /** Starts counting touches afresh. */
  resetTouches(): void {
    this.#tracker().resetTouches();
  }

  /** How many items are in flight now: 0 once every request has been answered. */
  itemsInFlight(): number {
    return this.#tracker().inFlight();
  }

  /** Applies `fault` to the requests `rule` selects, the first matching rule winning. */
  inject(fault: Fault, rule: FaultRule = {}): void {
    this.#rules.push({
      fault,
      remaining: rule.times ?? Number.POSITIVE_INFINITY,
      matches: (r) =>
        (rule.operation === undefined || r.operation === rule.operation) && (rule.when?.(r) ?? true),
    });
  }

  /** Removes every fault: requests pass through again. */
  heal(): void {
    this.#rules = [];
  }

  /** The requests received so far, optionally only those for `operation` and accepted by `when`. */
  requests(operation?: string, when?: (request: ProxiedRequest) => boolean): ProxiedRequest[] {
    return select(this.#requests, operation, when);
  }

  /** The requests whose answer DynamoDB gave and the proxy passed on, filtered as {@link requests}. */
  answered(operation?: string, when?: (request: ProxiedRequest) => boolean): ProxiedRequest[] {
    return select(this.#answered, operation, when);
  }

  /** Stops listening and drops every connection, stalled ones included. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
    this.#conflicts?.close();
  }

  #tracker(): ConflictTracker {
    if (this.#conflicts === undefined) throw new Error('Touches are counted in conflict mode only');
    return this.#conflicts.tracker;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url === TOUCHES_PATH && this.#conflicts) return this.#answerTouches(req, res);
    const body = Buffer.concat(chunks);
    const target = String(req.headers['x-amz-target'] ?? '');
    const request: ProxiedRequest = {
      operation: target.slice(target.lastIndexOf('.') + 1),
      body: body.toString(),
    };
    if (this.#record) {
      this.#requests.push(request);
      res.once('close', () => {
        if (!res.writableFinished) request.abandoned = true;
      });
    }
    const fault = this.#take(request);
    const conflicts = this.#conflicts;
    // A fault that answers in DynamoDB's place still counts as an attempt on the items it names.
    if (conflicts && fault && ANSWERED_IN_PLACE.has(fault.kind)) {
      const named = await namedItems(request.operation, request.body, conflicts.schemas);
      if (named) conflicts.tracker.count(named, false);
    }

    switch (fault?.kind) {
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'stall':
        return;
      case 'throttle':
        return answerError(res, 400, 'ThrottlingException', {
          message: 'Rate of requests exceeds the allowed throughput.',
        });
      case 'server-error':
        return answerError(res, 500, 'InternalServerError', { message: 'Internal server error' });
      case 'transaction-conflict': {
        const items = (JSON.parse(request.body) as { TransactItems?: unknown[] }).TransactItems ?? [];
        const answer = cancellation(items.map(() => true));
        return answerError(res, answer.status, answer.type, answer.body);
      }
      case 'unprocessed': {
        const { RequestItems = {} } = JSON.parse(request.body) as { RequestItems?: Record<string, unknown> };
        const answer = JSON.stringify({
          Responses: Object.fromEntries(Object.keys(RequestItems).map((table) => [table, []])),
          UnprocessedKeys: RequestItems,
        });
        res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(answer) });
        res.end(answer);
        return;
      }
      case 'transaction-throttled': {
        const items = (JSON.parse(request.body) as { TransactItems?: unknown[] }).TransactItems ?? [];
        const answer = cancellation(
          items.map((_, i) => i === 0),
          {
            Code: 'ThrottlingError',
            Message: 'Throughput exceeds the current capacity of your table or index.',
          },
        );
        return answerError(res, answer.status, answer.type, answer.body);
      }
      case 'delay':
        await sleep(fault.ms);
        break;
      case 'hold':
        await fault.until.catch(() => undefined);
        break;
    }

    const sent =
      fault?.kind === 'rewrite' ? Buffer.from(JSON.stringify(fault.rewrite(JSON.parse(request.body)))) : body;
    // On the body sent, after any delay or hold, before the wait for a caller slot: in flight from here.
    const named = conflicts && (await namedItems(request.operation, sent.toString(), conflicts.schemas));
    let admission: Admission | undefined;
    if (conflicts && named) {
      const decision = conflicts.tracker.admit(named);
      if (isConflictAnswer(decision)) return answerError(res, decision.status, decision.type, decision.body);
      admission = decision;
    }
    if (fault?.kind === 'hold-in-flight') await fault.until.catch(() => undefined);
    const { 'content-length': _, ...headers } = req.headers;
    let answer: UpstreamAnswer;
    // Queued for DynamoDB Local after the conflict check: the items stay in flight meanwhile, as
    // they would inside DynamoDB Local's own queue without the share.
    const freeSlot = await this.#share?.acquire(callerOf(req.url ?? '/'), isRead(request.operation));
    try {
      // DynamoDB's API is POST / whatever path named the caller.
      answer = await this.#forward(req.method ?? 'POST', '/', headers, sent);
    } catch (error) {
      admission?.release({ applied: false });
      throw error;
    } finally {
      freeSlot?.();
    }
    admission?.release({ applied: answer.status === 200 });
    if (fault?.kind === 'hold-answer' || fault?.kind === 'lose-response') {
      fault.answered?.();
      await fault.until?.catch(() => undefined);
    }
    if (fault?.kind === 'lose-response') {
      // DynamoDB has applied the request; its answer never reaches the client.
      req.socket.resetAndDestroy();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
    if (this.#record) this.#answered.push(request);
  }

  /** The touch report as JSON (GET), or forgotten (DELETE): for the bench against `npm start`. */
  #answerTouches(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'DELETE') {
      this.resetTouches();
      res.writeHead(204).end();
      return;
    }
    const body = JSON.stringify(this.touchReport());
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  #take(request: ProxiedRequest): Fault | undefined {
    const rule = this.#rules.find((r) => r.remaining > 0 && r.matches(request));
    if (!rule) return undefined;
    rule.remaining--;
    return rule.fault;
  }

  #forward(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) {
    return new Promise<UpstreamAnswer>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: this.#upstream.hostname,
          port: this.#upstream.port,
          method,
          path,
          headers: { ...headers, host: this.#upstream.host, 'content-length': body.length },
        },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (part: Buffer) => parts.push(part));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 502,
              headers: response.headers,
              body: Buffer.concat(parts),
            }),
          );
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }
}

/** An error answer in DynamoDB's JSON shape, which the SDK turns into its typed exception. */
function answerError(
  res: ServerResponse,
  status: number,
  type: string,
  fields: Record<string, unknown>,
): void {
  const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, ...fields });
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
