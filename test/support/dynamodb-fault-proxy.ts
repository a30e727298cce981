import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/*
 * A fault-injecting HTTP proxy in front of DynamoDB Local. The functions' SDK talks to it through
 * DYNAMODB_ENDPOINT, so every fault happens beneath the SDK's middleware, on the wire, where a
 * real outage happens: the SDK parses a real error answer or meets a real broken socket.
 */

/** What the proxy does with one request instead of passing it through. */
export type Fault =
  /** Waits, then forwards. */
  | { readonly kind: 'delay'; readonly ms: number }
  /** Waits until `until` settles, then forwards: DynamoDB sees the request after what the test did meanwhile. */
  | { readonly kind: 'hold'; readonly until: Promise<unknown> }
  /** Resets the connection before forwarding: DynamoDB never sees the request. */
  | { readonly kind: 'reset' }
  /** Accepts the request and never answers (until the proxy closes). */
  | { readonly kind: 'stall' }
  /** Answers 400 ThrottlingException, as DynamoDB does over the table's throughput. */
  | { readonly kind: 'throttle' }
  /** Answers 500 InternalServerError. */
  | { readonly kind: 'server-error' }
  /** Answers 400 TransactionCanceledException, every item cancelled by a TransactionConflict. */
  | { readonly kind: 'transaction-conflict' }
  /** Forwards, lets DynamoDB apply it, then resets the connection: the answer is lost. */
  | { readonly kind: 'lose-response' }
  /** Forwards `rewrite(body)` instead of the body received (a request DynamoDB sees differently). */
  | {
      readonly kind: 'rewrite';
      readonly rewrite: (body: Record<string, unknown>) => Record<string, unknown>;
    };

/** One request as the proxy received it. */
export interface ProxiedRequest {
  /** The DynamoDB operation, from the X-Amz-Target header (e.g. `TransactWriteItems`). */
  readonly operation: string;
  readonly body: string;
}

export interface FaultRule {
  /** Only requests for this operation. */
  readonly operation?: string;
  /** Only requests this predicate accepts (e.g. those naming one test's keys). */
  readonly when?: (request: ProxiedRequest) => boolean;
  /** How many matching requests get the fault; every one when unset. */
  readonly times?: number;
}

interface ActiveRule {
  readonly fault: Fault;
  readonly matches: (request: ProxiedRequest) => boolean;
  remaining: number;
}

const JSON_TYPE = 'application/x-amz-json-1.0';

export class DynamoDbFaultProxy {
  readonly endpoint: string;
  readonly #server: ReturnType<typeof createServer>;
  readonly #upstream: URL;
  readonly #requests: ProxiedRequest[] = [];
  readonly #answered: ProxiedRequest[] = [];
  #rules: ActiveRule[] = [];

  private constructor(server: ReturnType<typeof createServer>, upstream: URL) {
    this.#server = server;
    this.#upstream = upstream;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Starts a proxy on a free local port in front of `upstream` (DynamoDB Local's endpoint). */
  static async start(upstream: string): Promise<DynamoDbFaultProxy> {
    let proxy: DynamoDbFaultProxy | undefined;
    const server = createServer((req, res) => {
      proxy?.handle(req, res).catch(() => res.socket?.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new DynamoDbFaultProxy(server, new URL(upstream));
    return proxy;
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
    return this.#requests.filter(
      (r) => (operation === undefined || r.operation === operation) && (when?.(r) ?? true),
    );
  }

  /** The requests whose answer DynamoDB gave and the proxy passed on, filtered as {@link requests}. */
  answered(operation?: string, when?: (request: ProxiedRequest) => boolean): ProxiedRequest[] {
    return this.#answered.filter(
      (r) => (operation === undefined || r.operation === operation) && (when?.(r) ?? true),
    );
  }

  /** Stops listening and drops every connection, stalled ones included. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const target = String(req.headers['x-amz-target'] ?? '');
    const request: ProxiedRequest = {
      operation: target.slice(target.lastIndexOf('.') + 1),
      body: body.toString(),
    };
    this.#requests.push(request);
    const fault = this.#take(request);

    switch (fault?.kind) {
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'stall':
        return;
      case 'throttle':
        return answerError(
          res,
          400,
          'ThrottlingException',
          'Rate of requests exceeds the allowed throughput.',
        );
      case 'server-error':
        return answerError(res, 500, 'InternalServerError', 'Internal server error');
      case 'transaction-conflict': {
        const items = (JSON.parse(request.body) as { TransactItems?: unknown[] }).TransactItems ?? [];
        return answerError(res, 400, 'TransactionCanceledException', 'Transaction cancelled', {
          CancellationReasons: items.map(() => ({
            Code: 'TransactionConflict',
            Message: 'Transaction is ongoing',
          })),
        });
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
    const { 'content-length': _, ...headers } = req.headers;
    const answer = await this.#forward(req.method ?? 'POST', req.url ?? '/', headers, sent);
    if (fault?.kind === 'lose-response') {
      // DynamoDB has applied the request; its answer never reaches the client.
      req.socket.resetAndDestroy();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
    this.#answered.push(request);
  }

  #take(request: ProxiedRequest): Fault | undefined {
    const rule = this.#rules.find((r) => r.remaining > 0 && r.matches(request));
    if (!rule) return undefined;
    rule.remaining--;
    return rule.fault;
  }

  #forward(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) {
    return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
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
  message: string,
  extra: Record<string, unknown> = {},
): void {
  const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra });
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
