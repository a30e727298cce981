/**
 * The local gateway's HTTP server: listening, the address clients use, answering what Node
 * refuses itself, and closing it promptly.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, maxHeaderSize, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { renderGatewayResponse } from './gateway-answer.ts';

/** The address clients use for a listening host: a wildcard host is reached on loopback. */
export function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Local clients keep connections alive; waiting for them would make stopping take as long as they like.
  server.closeAllConnections();
  await closed;
}

/**
 * Options for `createServer`: Node would answer an HTTP/1.1 request without `Host` with a bare
 * 400 itself; turned off so that {@link refuseWithoutHost} answers it with problem+json.
 */
export const SERVER_OPTIONS = { requireHostHeader: false } as const;

/** A problem document for a refusal made outside any function, with its request id. */
function refusal(status: number, reason: string, detail: string) {
  const requestId = randomUUID();
  const answer = renderGatewayResponse('DEFAULT_4XX', { requestId, errorMessage: detail, status });
  // The DEFAULT_4XX template cannot know its status; here it is known, so the problem says it.
  const { type, title } = JSON.parse(answer.body) as Record<string, unknown>;
  const body = JSON.stringify({ type, title, status, detail, requestId });
  const headers: Record<string, string> = {
    ...answer.headers,
    'content-length': String(Buffer.byteLength(body)),
    'x-amzn-requestid': requestId,
    connection: 'close',
  };
  return { status, reason, headers, body };
}

/** Node's own refusals, by parser error code: the status Node would send without a handler, and why. */
function clientErrorRefusal(code: string | undefined) {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return refusal(
        431,
        'Request Header Fields Too Large',
        `The request line and headers exceed the local server's limit of ${maxHeaderSize} bytes`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return refusal(
        413,
        'Payload Too Large',
        "The chunk extensions of the body exceed Node's limit of 16 KiB (16384 bytes)",
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return refusal(408, 'Request Timeout', 'The request was not received in time');
    default:
      return refusal(400, 'Bad Request', 'The request is not a well-formed HTTP/1.1 request');
  }
}

/**
 * Everything Node answers itself, before any handler sees the request, answered with problem+json
 * and a request id as every other refusal is: parser errors (headers over `maxHeaderSize`, a
 * malformed request line, a bad Content-Length, chunk extensions too long, a request too slow)
 * where the socket can still be written to, and an `Expect` other than `100-continue` (417).
 * Node alone would send a bare status line. The last of Node's own answers, 400 for an HTTP/1.1
 * request without Host, is {@link refuseWithoutHost}'s, with {@link SERVER_OPTIONS}.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset connection, or one whose response has started, can only be closed. An error in a
    // body (chunk extensions) comes after its request was dispatched, but before any answer.
    if (
      error.code === 'ECONNRESET' ||
      !socket.writable ||
      (socket as { _httpMessage?: ServerResponse })._httpMessage?.headersSent
    ) {
      socket.destroy();
      return;
    }
    const { status, reason, headers, body } = clientErrorRefusal(error.code);
    const head = [
      `HTTP/1.1 ${status} ${reason}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
  // With a listener, Node leaves an `Expect` it does not know to it instead of a bare 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    writeRefusal(
      res,
      refusal(
        417,
        'Expectation Failed',
        `Expect: ${req.headers.expect ?? ''} is not supported; the only expectation served is 100-continue`,
      ),
    );
  });
}

/**
 * Answers an HTTP/1.1 request without a Host header with 400 problem+json (RFC 9112 §3.2: a
 * server must), as Node would with a bare 400; `true` when it did.
 */
export function refuseWithoutHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersion !== '1.1' || req.headers.host !== undefined) return false;
  writeRefusal(res, refusal(400, 'Bad Request', 'An HTTP/1.1 request must have a Host header'));
  return true;
}

function writeRefusal(res: ServerResponse, answer: ReturnType<typeof refusal>): void {
  res.writeHead(answer.status, answer.reason, answer.headers);
  res.end(answer.body);
}
