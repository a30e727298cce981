import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
});

/** One delivery of event `id`, signed as the dispatcher signs it; the receiver's status. */
async function deliver(hooks: WebhookReceiver, id: string): Promise<number> {
  const body = JSON.stringify({ type: 'transfer.received', timestamp: new Date().toISOString(), data: {} });
  const timestamp = new Date();
  const signature = new Webhook(SECRET).sign(id, timestamp, body);
  const response = await fetch(hooks.url, {
    method: 'POST',
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    },
    body,
  });
  return response.status;
}

describe('the test webhook receiver failing a share of requests', () => {
  it('with failOnce, answers 500 to an event at most once, however the draws fall', async () => {
    // Every draw fails: only failOnce lets an event through, at its second attempt.
    receiver = await startWebhookReceiver(() => 0);
    receiver.secrets.push(SECRET);
    receiver.failShare = 0.3;
    receiver.failOnce = true;
    const statuses = [];
    for (const id of ['evt_a', 'evt_a', 'evt_a', 'evt_b', 'evt_b'])
      statuses.push(await deliver(receiver, id));
    expect(statuses).toEqual([500, 204, 204, 500, 204]);
    expect(receiver.failed).toBe(2);
  });

  it('without it, fails every request the draws pick, as the bench asks', async () => {
    receiver = await startWebhookReceiver(() => 0);
    receiver.secrets.push(SECRET);
    receiver.failShare = 0.3;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await deliver(receiver, 'evt_c'));
    expect(statuses).toEqual([500, 500, 500]);
  });
});

describe('the test webhook receiver brought back up', () => {
  it('rejects with the reason, not an unhandled error, when its port was taken while it was down', async () => {
    receiver = await startWebhookReceiver();
    await receiver.setDown(true);
    const taker = createServer();
    await new Promise<void>((resolve) =>
      taker.listen(Number(new URL(receiver?.url ?? '').port), '127.0.0.1', resolve),
    );
    try {
      await expect(receiver.setDown(false)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await new Promise((resolve) => taker.close(resolve));
    }
  });
});
