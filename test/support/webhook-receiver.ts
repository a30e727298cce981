/**
 * A merchant's webhook receiver on loopback, for the e2e tests: every request verified with the npm
 * package `standardwebhooks` (as a merchant would, not with this project's signing code), against
 * the secrets it is told. It can answer 500 to a share of requests, answer late, hang, or be shut
 * for a while.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedEvent {
  readonly id: string;
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
  /** The body's exact text, as signed. */
  readonly text: string;
  readonly receivedAt: number;
}

export interface WebhookReceiver {
  readonly url: string;
  /** Accepted deliveries, in arrival order (a redelivered event appears again). */
  readonly received: ReceivedEvent[];
  /** Requests whose signature did not verify: a correct sender makes none. */
  readonly unverified: string[];
  /** Requests answered 500 on purpose. */
  failed: number;
  /** The secrets a delivery may verify with (any one of them). */
  secrets: string[];
  /** The share of requests answered 500 (0 to 1). */
  failShare: number;
  /**
   * With `failShare`: an event is answered 500 at most once, so that the retry schedule always
   * outlasts the failures (drawn for every request, a 30 % share fails an event's last five
   * attempts after an outage 0.3^5 of the time: a test failing by chance).
   */
  failOnce: boolean;
  /** When set, every verified request is answered with this status and not counted as received. */
  answer: number | undefined;
  /** Verified requests answered with `answer`. */
  refused: number;
  /** While true, a verified request is never answered (an endpoint that hangs); its id is kept in `hung`. */
  hang: boolean;
  readonly hung: string[];
  /** How long each answer waits after its request has been taken (an endpoint that is slow but answers). */
  delayMs: number;
  /** While true, every connection is refused (the server is closed). */
  setDown(down: boolean): Promise<void>;
  /** Resolves once `predicate` holds for what was received, polling; rejects after `ms`. */
  until(predicate: (received: readonly ReceivedEvent[]) => boolean, ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(random: () => number = Math.random): Promise<WebhookReceiver> {
  let server: Server | undefined;
  let port = 0;
  const failedIds = new Set<string>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    unverified: [],
    failed: 0,
    secrets: [],
    failShare: 0,
    failOnce: false,
    answer: undefined,
    refused: 0,
    hang: false,
    hung: [],
    delayMs: 0,
    async setDown(down) {
      if (down) await close();
      else await listen();
    },
    async until(predicate, ms) {
      const end = Date.now() + ms;
      while (!predicate(receiver.received)) {
        if (Date.now() > end)
          throw new Error(`not received within ${ms} ms (${receiver.received.length} so far)`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => close(),
  };

  function handle(text: string, headers: Record<string, string>): number | 'hang' {
    const verified = receiver.secrets.some((secret) => {
      try {
        new Webhook(secret).verify(text, headers);
        return true;
      } catch {
        return false;
      }
    });
    if (!verified) {
      receiver.unverified.push(headers['webhook-id'] ?? '');
      return 401;
    }
    if (receiver.hang) {
      receiver.hung.push(headers['webhook-id'] ?? '');
      return 'hang';
    }
    if (receiver.answer !== undefined) {
      receiver.refused++;
      return receiver.answer;
    }
    const id = headers['webhook-id'] ?? '';
    if (!(receiver.failOnce && failedIds.has(id)) && random() < receiver.failShare) {
      failedIds.add(id);
      receiver.failed++;
      return 500;
    }
    const body = JSON.parse(text) as { type: string; timestamp: string; data: Record<string, unknown> };
    receiver.received.push({ id: headers['webhook-id'] ?? '', ...body, text, receivedAt: Date.now() });
    return 204;
  }

  function listen(): Promise<void> {
    const listening = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers = Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
            name,
            String(req.headers[name] ?? ''),
          ]),
        );
        const status = handle(Buffer.concat(chunks).toString('utf8'), headers);
        if (status === 'hang') return;
        if (receiver.delayMs > 0) setTimeout(() => res.writeHead(status).end(), receiver.delayMs);
        else res.writeHead(status).end();
      });
    });
    server = listening;
    // Back up after `setDown(true)`, the port may have been taken meanwhile: that fails the test
    // that asked, with the reason, rather than the worker on an unhandled 'error'.
    return new Promise((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => {
        listening.off('error', reject);
        port = (listening.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  function close(): Promise<void> {
    const closing = server;
    server = undefined;
    if (!closing) return Promise.resolve();
    return new Promise((resolve) => {
      closing.close(() => resolve());
      closing.closeAllConnections();
    });
  }

  await listen();
  (receiver as { url: string }).url = `http://127.0.0.1:${port}/hooks`;
  return receiver;
}
