/**
 * The local gateway's HTTP server: listening, the address clients use, answering what Node
 * refuses itself, and closing it promptly.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
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

/** Node's own refusals, by parser error code, with the status Node would send without a handler. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, readonly [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * Requests Node refuses before any handler sees them (headers over `maxHeaderSize`, a malformed
 * request line…) still get problem+json, as every other refusal does, where the socket can
 * still be written to; Node alone would send a bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset connection, or one whose response has started, can only be closed.
    if (
      error.code === 'ECONNRESET' ||
      !socket.writable ||
      (socket as { _httpMessage?: unknown })._httpMessage
    ) {
      socket.destroy();
      return;
    }
    const [status, reason] = CLIENT_ERROR_STATUS[error.code ?? ''] ?? [400, 'Bad Request'];
    const requestId = randomUUID();
    const answer = renderGatewayResponse('DEFAULT_4XX', { requestId, errorMessage: reason, status });
    // The DEFAULT_4XX template cannot know its status; here it is known, so the problem says it.
    const { type, title, detail } = JSON.parse(answer.body) as Record<string, unknown>;
    const body = JSON.stringify({ type, title, status, detail, requestId });
    const head = [
      `HTTP/1.1 ${status} ${reason}`,
      ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
      `content-length: ${Buffer.byteLength(body)}`,
      `x-amzn-requestid: ${requestId}`,
      'connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
