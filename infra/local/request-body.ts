/** Reading a request body under API Gateway's payload limit, without buffering more than it. */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from './gateway-answer.ts';

/** API Gateway's payload limit (a hard quota of REST APIs). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The 413 for a body over {@link MAX_BODY_BYTES}, naming that limit (Lambda's is another 413). */
const bodyTooLarge = () =>
  new GatewayError(
    'REQUEST_TOO_LARGE',
    'Request Too Long',
    undefined,
    undefined,
    `The request body exceeds API Gateway's payload limit of 10 MB (${MAX_BODY_BYTES} bytes)`,
  );

/**
 * How much of an oversized body is still read, and dropped, after the 413: clients send their
 * whole body before they read the answer, so closing at once would show them a broken pipe
 * instead of the 413. Past this, the connection is cut.
 */
const MAX_DRAIN_BYTES = 4 * MAX_BODY_BYTES;

/** Whether the request has a body at all: HTTP/1.1 announces one by Content-Length or Transfer-Encoding. */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

/**
 * The body, or `null` when there is none. Refuses more than {@link MAX_BODY_BYTES} as soon as the
 * declared length or the bytes received exceed it, keeping nothing from there on.
 */
export function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    drain(req);
    return Promise.reject(bodyTooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      chunks.length = 0;
      drain(req);
      reject(bodyTooLarge());
    };
    req.on('data', onData);
    req.once('end', () => resolve(size === 0 ? null : Buffer.concat(chunks, size)));
    // The client went away, or Node refused the rest of the body (and answered it, `http-server.ts`).
    req.once('error', () =>
      reject(new GatewayError('DEFAULT_4XX', 'The request body was not received', 400)),
    );
  });
}

/** Reads and drops the rest of a refused body, up to {@link MAX_DRAIN_BYTES}; then cuts the connection. */
function drain(req: IncomingMessage): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DRAIN_BYTES) req.socket.destroy();
  });
  req.resume();
}
