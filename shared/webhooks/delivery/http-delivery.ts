/**
 * One delivery attempt over HTTP, as Standard Webhooks 1.0 lays it out: the body sent byte for
 * byte as the dispatcher gave it, `webhook-id` (the event id, the same on every attempt),
 * `webhook-timestamp` (this attempt's time, so that a late retry still passes the receiver's
 * tolerance) and `webhook-signature`, one `v1,` signature per current secret, made by the npm
 * package `standardwebhooks` over exactly those bytes. No redirect is followed (a 3xx is a
 * failure), the answer is read to at most a few KB, and the whole attempt ends after 15 s.
 *
 * The address is checked where it is used: every address the name resolves to, at connect time,
 * through the agent's `lookup` (shared/webhooks/model/destination.ts), so a name that resolved to
 * a public address at registration and to 10.0.0.1 now (DNS rebinding) is refused before any
 * connection is made. A literal address in the URL is checked before the request.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type {
  AttemptErrorClass,
  AttemptResult,
  Deliver,
  DeliveryTarget,
  WebhookMessage,
} from '../model/delivery.ts';
import {
  checkEndpointUrl,
  type DestinationMode,
  DestinationRefusedError,
  hostOf,
  isAllowedAddress,
} from '../model/destination.ts';
import { MAX_RETRY_DELAY_MS, RETRY_AFTER_STATUSES } from '../model/retry-schedule.ts';

/** Standard Webhooks allows 15–30 s; the shorter keeps a dead endpoint from holding a worker. */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** How much of an answer is read: enough to drain a short body, never a large one. */
export const MAX_ANSWER_BYTES = 4096;

/** The most an answer's status line and headers may take (Node's default is 16 KB). */
const MAX_HEADER_BYTES = 8192;

/** Resolves a host name to every address it has now; `dns.lookup` unless a test injects one. */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

export interface HttpDeliverOptions {
  readonly mode: DestinationMode;
  readonly resolve?: Resolver;
  readonly timeoutMs?: number;
  readonly maxAnswerBytes?: number;
  /** Epoch ms; the `webhook-timestamp` of each attempt. */
  readonly now?: () => number;
}

/** The code a connection refused by the address rule fails with (never a code Node uses). */
const REFUSED_ADDRESS = 'EWEBHOOKADDRESS';

class AttemptTimeout extends Error {
  readonly code = 'EWEBHOOKTIMEOUT';
}

/** An answer that is no answer: the connection closed first, or 1xx lines past the limit (`connection`). */
class BrokenAnswer extends Error {}

/**
 * A `lookup` for the agents: resolves with `resolve`, and fails the connection when any address
 * is refused, so that happy eyeballs cannot pick the private one of a mixed answer.
 */
export function checkedLookup(resolve: Resolver, mode: DestinationMode): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.length === 0 || addresses.some((a) => !isAllowedAddress(a.address, mode));
        if (refused) {
          const error = Object.assign(
            new Error(`${hostname} resolves to an address webhooks may not reach`),
            {
              code: REFUSED_ADDRESS,
            },
          );
          callback(error, '', 4);
          return;
        }
        const family = options.family === 6 ? 6 : options.family === 4 ? 4 : undefined;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        if (options.all) {
          (callback as unknown as (e: null, a: readonly LookupAddress[]) => void)(null, usable);
        } else {
          const first = usable[0] ?? addresses[0];
          callback(null, first?.address ?? '', first?.family ?? 4);
        }
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 4),
    );
  };
}

/** The `webhook-signature` value: a `v1,` signature per secret, separated by spaces. */
export function signatureHeader(secrets: readonly string[], message: WebhookMessage, at: Date): string {
  return secrets.map((secret) => new Webhook(secret).sign(message.id, at, message.body)).join(' ');
}

/** `Retry-After` as ms: delta-seconds or an HTTP date; `undefined` when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const ms = /^\d{1,9}$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), MAX_RETRY_DELAY_MS);
}

function errorClassOf(error: unknown): AttemptErrorClass {
  const code = (error as { code?: unknown }).code;
  if (code === REFUSED_ADDRESS) return 'refused-address';
  if (error instanceof AttemptTimeout) return 'timeout';
  if (typeof code !== 'string') return 'connection';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|VERIFY/.test(code))
    return 'tls';
  return 'connection';
}

/** Builds the `Deliver` the dispatcher calls. */
export function createHttpDeliver(options: HttpDeliverOptions): Deliver {
  const { mode } = options;
  const resolve = options.resolve ?? systemResolver;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  const now = options.now ?? Date.now;
  const lookup = checkedLookup(resolve, mode);
  // Kept-alive connections were checked when they were made; a new one is checked again. No
  // sockets cap per host: the dispatcher's caps per endpoint and in all bound the connections,
  // and one per host (16, as first built) queued every endpoint of a host behind another's
  // hanging attempts, the wait counted in their own timeout.
  const agents = {
    'http:': new http.Agent({ keepAlive: true, lookup }),
    'https:': new https.Agent({ keepAlive: true, lookup }),
  };

  return async (target: DeliveryTarget, message: WebhookMessage): Promise<AttemptResult> => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = checkEndpointUrl(target.url, mode);
    } catch (error) {
      const refused = error instanceof DestinationRefusedError && error.reason === 'forbidden-address';
      return refused
        ? { outcome: 'refused-address', errorClass: 'refused-address', durationMs: elapsed() }
        : { outcome: 'retry', errorClass: 'invalid-url', durationMs: elapsed() };
    }
    const at = new Date(now());
    const body = Buffer.from(message.body, 'utf8');
    const headers = {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'wallet-webhooks/1.0',
      'webhook-id': message.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatureHeader(target.secrets, message, at),
    };
    try {
      const answer = await post(url, body, headers, agents[url.protocol as 'http:' | 'https:'], {
        timeoutMs,
        maxAnswerBytes,
        host: hostOf(url),
      });
      const { statusCode } = answer;
      const durationMs = elapsed();
      if (statusCode >= 200 && statusCode < 300) return { outcome: 'delivered', statusCode, durationMs };
      if (statusCode === 410) return { outcome: 'gone', statusCode, errorClass: 'http-status', durationMs };
      const errorClass = statusCode >= 300 && statusCode < 400 ? 'redirect' : 'http-status';
      const wait = RETRY_AFTER_STATUSES.has(statusCode) ? retryAfterMs(answer.retryAfter, now()) : undefined;
      return {
        outcome: 'retry',
        statusCode,
        errorClass,
        durationMs,
        ...(wait !== undefined ? { retryAfterMs: wait } : {}),
      };
    } catch (error) {
      const errorClass = errorClassOf(error);
      return {
        outcome: errorClass === 'refused-address' ? 'refused-address' : 'retry',
        errorClass,
        durationMs: elapsed(),
      };
    }
  };
}

interface Answer {
  readonly statusCode: number;
  readonly retryAfter: string | undefined;
}

/**
 * One POST: resolves with the status once at most `maxAnswerBytes` of the answer are read, and
 * settles once, whatever the receiver does, by the timeout at the latest. Counted on the socket,
 * the bytes read include the status lines and headers of informational (1xx) answers, which a
 * receiver could otherwise send without end until the timeout. A `101 Switching Protocols` is a
 * failed attempt: Node's client destroys the socket of an upgrade no one listens for, with neither
 * a response nor an error, and an attempt waiting for those never ended, holding its endpoint's
 * slot and the dispatcher's drain for good.
 */
function post(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  agent: http.Agent,
  limits: { timeoutMs: number; maxAnswerBytes: number; host: string },
): Promise<Answer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    const request = client.request(url, { method: 'POST', headers, agent, maxHeaderSize: MAX_HEADER_BYTES });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: Error) => {
      settle(() => reject(error));
      request.destroy();
    };
    const timer = setTimeout(() => fail(new AttemptTimeout('The attempt timed out')), limits.timeoutMs);
    /** Bytes read on the socket for this request (a kept-alive socket has read earlier answers). */
    let readOnSocket = () => 0;
    request.on('socket', (socket) => {
      const before = socket.bytesRead;
      readOnSocket = () => socket.bytesRead - before;
    });
    const tooMuch = () => readOnSocket() > limits.maxAnswerBytes + MAX_HEADER_BYTES;
    request.on('information', () => {
      if (tooMuch()) fail(new BrokenAnswer('Informational answers past the limit'));
    });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      settle(() => resolve({ statusCode: response.statusCode ?? 101, retryAfter: undefined }));
    });
    request.on('error', (error) => settle(() => reject(error)));
    request.on('close', () =>
      settle(() => reject(new BrokenAnswer('The connection closed without an answer'))),
    );
    request.on('response', (response) => {
      const answer = {
        statusCode: response.statusCode ?? 0,
        retryAfter: response.headers['retry-after'],
      };
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough read: the rest is not waited for, and the connection is not reused.
        if (read >= limits.maxAnswerBytes) {
          response.destroy();
          settle(() => resolve(answer));
        }
      });
      response.on('end', () => settle(() => resolve(answer)));
      response.on('error', () => settle(() => resolve(answer)));
      response.on('close', () => settle(() => resolve(answer)));
    });
    request.end(body);
  });
}
