/**
 * The end-to-end benchmark's HTTP client: one kept-alive HTTP/1.1 connection per closed-loop
 * worker, one request at a time, written in one piece, the response read by its Content-Length
 * (the local gateway always sends one). It is the load generator, not part of what is measured,
 * yet it shares the machine's two cores with the gateway and DynamoDB Local, and only the
 * gateway side has it: node:http's client (a ClientRequest, an IncomingMessage, their streams and
 * the Agent's bookkeeping per request) took twice this one's CPU per request, all of it taken
 * from the processes under test.
 */
import { connect, type Socket } from 'node:net';

export interface Response {
  readonly status: number;
  readonly body: string;
}

/** Node's default keep-alive timeout, for a server that does not announce its own. */
const DEFAULT_KEEP_ALIVE_MS = 5_000;
/** How long before the server's keep-alive timeout a connection is no longer reused. */
const KEEP_ALIVE_MARGIN_MS = 1_000;

export class KeepAliveConnection {
  readonly #host: string;
  readonly #port: number;
  #socket: Socket | undefined;
  #buffer: Buffer = Buffer.alloc(0);
  #pending: { resolve: (response: Response) => void; reject: (error: Error) => void } | undefined;
  #idleSince = 0;
  #keepAliveMs = DEFAULT_KEEP_ALIVE_MS;

  constructor(host: string, port: number) {
    this.#host = host;
    this.#port = port;
  }

  request(
    method: string,
    path: string,
    headers: Readonly<Record<string, string>>,
    body?: string,
  ): Promise<Response> {
    if (this.#pending) return Promise.reject(new Error('One request at a time per connection'));
    // A connection the server may be closing right now is not worth the race: open another.
    if (this.#socket && Date.now() - this.#idleSince > this.#keepAliveMs - KEEP_ALIVE_MARGIN_MS) {
      this.#socket.destroy();
      this.#socket = undefined;
    }
    const socket = this.#socket ?? this.#open();
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.#host}:${this.#port}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
      socket.write(`${head}\r\n${body ?? ''}`);
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  #open(): Socket {
    const socket = connect({ host: this.#host, port: this.#port, noDelay: true });
    this.#buffer = Buffer.alloc(0);
    // A connection given up (closed or replaced) has nothing more to say about the request in flight.
    const current = () => this.#socket === socket;
    socket.on('data', (chunk: Buffer) => {
      if (current()) this.#onData(chunk);
    });
    socket.on('error', (error) => {
      if (current()) this.#settle(error);
    });
    socket.on('close', () => {
      if (!current()) return;
      this.#socket = undefined;
      this.#settle(new Error('The connection closed before the response was complete'));
    });
    this.#socket = socket;
    return socket;
  }

  #onData(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const headEnd = this.#buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = this.#buffer.toString('latin1', 0, headEnd);
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1];
    if (length === undefined) {
      this.#settle(new Error(`A response without Content-Length: ${head}`));
      this.close();
      return;
    }
    const end = headEnd + 4 + Number(length);
    if (this.#buffer.length < end) return;
    const body = this.#buffer.toString('utf8', headEnd + 4, end);
    this.#buffer = this.#buffer.subarray(end);
    const keepAlive = /\r\nkeep-alive:[^\r]*timeout=(\d+)/i.exec(head)?.[1];
    if (keepAlive !== undefined) this.#keepAliveMs = Number(keepAlive) * 1000;
    if (/\r\nconnection:[ \t]*close/i.test(head)) this.close();
    this.#idleSince = Date.now();
    this.#settle(undefined, { status: Number(head.slice(9, 12)), body });
  }

  #settle(error: Error | undefined, response?: Response): void {
    const pending = this.#pending;
    this.#pending = undefined;
    if (error) pending?.reject(error);
    else if (response) pending?.resolve(response);
  }
}
