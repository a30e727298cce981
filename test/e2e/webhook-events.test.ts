import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { call, fundViaCli, openWallet, tokenFor } from './http.ts';

/*
 * Webhook events through `npm start`'s stack (the e2e global setup): payments through the local
 * gateway, events derived from DynamoDB Local's stream, delivered by the dispatcher to a receiver
 * on loopback that verifies each with the npm package `standardwebhooks`.
 */

const SCOPES = 'read:wallet write:wallet read:webhooks write:webhooks';

async function wallet(label: string) {
  const sub = uniqueSub(label);
  return { sub, token: await tokenFor(SCOPES, { sub }) };
}

async function register(token: string, url: string, eventTypes?: string[]) {
  const created = await call('POST', '/api/wallet/webhooks', {
    token,
    json: { url, ...(eventTypes ? { eventTypes } : {}) },
  });
  expect(created.status, created.text).toBe(201);
  return created.json as { id: string; secret: string };
}

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

describe('webhook events', () => {
  it('tells the payer transfer.sent and the recipient transfer.received and transfer.completed, signed, with reference and metadata', async () => {
    const alice = await wallet('payer');
    const shop = await wallet('shop');
    await openWallet(shop.sub);
    await openWallet(alice.sub);
    receiver.secrets.push((await register(shop.token, receiver.url)).secret);
    receiver.secrets.push((await register(alice.token, receiver.url, ['transfer.sent'])).secret);
    await fundViaCli(alice.sub, '20');
    const sent = await call('POST', '/api/wallet/send', {
      token: alice.token,
      json: { toAddress: shop.sub, amount: 12.34, reference: 'INV-1', metadata: { order: '1' } },
    });
    expect(sent.status, sent.text).toBe(200);
    const transferId = (sent.json as { transferId: string }).transferId;
    const ofTransfer = () => receiver.received.filter((event) => event.data.transferId === transferId);
    await receiver.until(() => ofTransfer().length >= 3, 60_000);
    const byType = Object.fromEntries(ofTransfer().map((event) => [event.type, event]));
    expect(byType['transfer.sent']?.data).toMatchObject({
      address: alice.sub,
      counterparty: shop.sub,
      amount: 12.34,
      status: 'completed',
      seq: 2,
      balanceAfter: 7.66,
      reference: 'INV-1',
      metadata: { order: '1' },
    });
    expect(byType['transfer.received']?.data).toMatchObject({
      address: shop.sub,
      counterparty: alice.sub,
      amount: 12.34,
      status: 'completed',
      reference: 'INV-1',
    });
    expect(byType['transfer.completed']?.data).toMatchObject({
      address: shop.sub,
      seq: 1,
      balanceAfter: 12.34,
      reference: 'INV-1',
      metadata: { order: '1' },
    });
    // The amount as the rest of the API writes it: an exact decimal in the text itself.
    expect(byType['transfer.completed']?.text).toContain('"amount":12.34,');
    expect(receiver.unverified).toEqual([]);
    // The events API lists them under the same ids.
    const listed = await call('GET', '/api/wallet/events', { token: shop.token });
    expect(listed.status, listed.text).toBe(200);
    const ids = (listed.json as { items: { id: string }[] }).items.map((item) => item.id);
    expect(ids).toEqual(
      expect.arrayContaining([byType['transfer.received']?.id, byType['transfer.completed']?.id]),
    );
  }, 120_000);
});
