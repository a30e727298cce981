import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { call, expectProblem, fundViaCli, openWallet, tokenFor } from './http.ts';

/*
 * The events API, replay and redelivery through the local gateway (issue 46): a wallet's events
 * newest first with a type filter and cursor pages, each by id, for its owner only (404 for anyone
 * else's); an endpoint disabled by a 410 while events flowed gets every missed one by a replay; a
 * redelivery sends an event again with the same webhook-id. Deliveries go to a loopback receiver
 * that verifies them with `standardwebhooks`.
 */

const SCOPES = 'read:wallet write:wallet read:webhooks write:webhooks';

async function wallet(label: string, scope = SCOPES) {
  const sub = uniqueSub(label);
  return { sub, token: await tokenFor(scope, { sub }) };
}

interface EventJson {
  readonly id: string;
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

async function events(token: string, query = '') {
  const page = await call('GET', `/api/wallet/events${query}`, { token });
  expect(page.status, page.text).toBe(200);
  return page.json as { items: EventJson[]; nextCursor?: string };
}

/** Polls the events API until `count` events of the wallet are listed. */
async function eventsListed(token: string, count: number): Promise<EventJson[]> {
  const until = Date.now() + 60_000;
  for (;;) {
    const { items } = await events(token, '?limit=100');
    if (items.length >= count || Date.now() > until) return items;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

/** A shop paid `count` times by a payer; both wallets' events derived. */
async function paidShop(count: number) {
  const shop = await wallet('shop');
  const payer = await wallet('payer');
  await openWallet(shop.sub);
  await fundViaCli(payer.sub, '10');
  for (let n = 0; n < count; n++) {
    const sent = await call('POST', '/api/wallet/send', {
      token: payer.token,
      json: { toAddress: shop.sub, amount: 0.5, reference: `r-${n}` },
    });
    expect(sent.status, sent.text).toBe(200);
  }
  return { shop, payer };
}

describe('GET /api/wallet/events', () => {
  it('lists the wallet’s events newest first, by type, a page at a time, and each by id', async () => {
    const { shop, payer } = await paidShop(3);
    // Three payments, each received and completed.
    const all = await eventsListed(shop.token, 6);
    expect(all).toHaveLength(6);
    expect(all.map((event) => event.timestamp)).toEqual(
      [...all.map((event) => event.timestamp)].sort().reverse(),
    );
    expect(new Set(all.map((event) => event.type))).toEqual(
      new Set(['transfer.received', 'transfer.completed']),
    );
    const completed = await events(shop.token, '?type=transfer.completed');
    expect(completed.items.map((event) => event.data.seq)).toEqual([3, 2, 1]);
    // Pages of 4 then 2, with nothing lost or repeated.
    const first = await events(shop.token, '?limit=4');
    expect(first.items).toHaveLength(4);
    const second = await events(shop.token, `?limit=4&cursor=${first.nextCursor}`);
    expect([...first.items, ...second.items].map((event) => event.id)).toEqual(all.map((event) => event.id));
    expect(second.nextCursor).toBeUndefined();
    const one = all[0] as EventJson;
    const byId = await call('GET', `/api/wallet/events/${one.id}`, { token: shop.token });
    expect(byId.status).toBe(200);
    expect(byId.json).toEqual(one);
    // The payer's own events are its own: three transfer.sent (and its deposit).
    const payers = await eventsListed(payer.token, 4);
    expect(payers.filter((event) => event.type === 'transfer.sent')).toHaveLength(3);
  }, 120_000);

  it('answers 404 for another wallet’s event, and 400 for a bad type, limit or cursor', async () => {
    const { shop } = await paidShop(1);
    const [event] = await eventsListed(shop.token, 2);
    const stranger = await wallet('stranger');
    expectProblem(await call('GET', `/api/wallet/events/${event?.id}`, { token: stranger.token }), 404);
    expectProblem(await call('GET', '/api/wallet/events/evt_nope', { token: stranger.token }), 404);
    const page = await events(shop.token, '?limit=1');
    expectProblem(
      await call('GET', `/api/wallet/events?cursor=${page.nextCursor}`, { token: stranger.token }),
      400,
    );
    for (const query of ['?type=transfer.lost', '?limit=0', '?limit=101', '?cursor=%24%24']) {
      expectProblem(await call('GET', `/api/wallet/events${query}`, { token: shop.token }), 400);
    }
  }, 120_000);

  it('answers 403 without read:webhooks, and without read:wallet: events show the balance and history', async () => {
    const { token } = await wallet('reader', 'read:wallet');
    expectProblem(await call('GET', '/api/wallet/events', { token }), 403);
    const { shop } = await paidShop(1);
    const [event] = await eventsListed(shop.token, 1);
    const hooksOnly = await tokenFor('read:webhooks', { sub: shop.sub });
    expectProblem(await call('GET', '/api/wallet/events', { token: hooksOnly }), 403);
    expectProblem(await call('GET', `/api/wallet/events/${event?.id}`, { token: hooksOnly }), 403);
  }, 120_000);
});

describe('replay and redelivery', () => {
  it('an endpoint disabled by a 410 while events flowed gets every missed event by a replay', async () => {
    const shop = await wallet('shop');
    const payer = await wallet('payer');
    await openWallet(shop.sub);
    await fundViaCli(payer.sub, '10');
    const since = new Date(Date.now() - 1_000).toISOString();
    const created = await call('POST', '/api/wallet/webhooks', {
      token: shop.token,
      json: { url: receiver.url },
    });
    expect(created.status, created.text).toBe(201);
    const endpoint = created.json as { id: string; secret: string };
    receiver.secrets.push(endpoint.secret);
    receiver.answer = 410;
    try {
      for (let n = 0; n < 3; n++) {
        expect(
          (
            await call('POST', '/api/wallet/send', {
              token: payer.token,
              json: { toAddress: shop.sub, amount: 1 },
            })
          ).status,
        ).toBe(200);
      }
      // The first delivery's 410 disables it.
      const until = Date.now() + 60_000;
      let status = 'enabled';
      while (status === 'enabled' && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        status = (
          (await call('GET', `/api/wallet/webhooks/${endpoint.id}`, { token: shop.token })).json as {
            status: string;
          }
        ).status;
      }
      expect(status).toBe('disabled');
      await eventsListed(shop.token, 6);
    } finally {
      receiver.answer = undefined;
    }
    // Disabled, it is sent nothing: a replay or a redelivery is refused until it is enabled, not
    // accepted to do nothing (as first built).
    const missed = (await eventsListed(shop.token, 6))[0] as { id: string };
    for (const refused of [
      await call('POST', `/api/wallet/webhooks/${endpoint.id}/replay`, {
        token: shop.token,
        json: { since },
      }),
      await call('POST', `/api/wallet/events/${missed.id}/redeliver`, {
        token: shop.token,
        json: { webhookId: endpoint.id },
      }),
    ]) {
      expectProblem(refused, 409);
      expect(refused.json).toMatchObject({ type: expect.stringMatching(/endpoint-disabled$/) });
    }
    const enabled = await call('PATCH', `/api/wallet/webhooks/${endpoint.id}`, {
      token: shop.token,
      body: JSON.stringify({ status: 'enabled' }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(enabled.status, enabled.text).toBe(200);
    const replay = await call('POST', `/api/wallet/webhooks/${endpoint.id}/replay`, {
      token: shop.token,
      json: { since },
    });
    expect(replay.status, replay.text).toBe(202);
    const listed = await eventsListed(shop.token, 6);
    await receiver.until(
      (received) => listed.every((event) => received.some((got) => got.id === event.id)),
      60_000,
    );
    expect(receiver.unverified).toEqual([]);
  }, 180_000);

  it('redelivers one event with the same webhook-id, for its owner and its own endpoints only', async () => {
    const { shop } = await paidShop(1);
    const created = await call('POST', '/api/wallet/webhooks', {
      token: shop.token,
      json: { url: receiver.url, eventTypes: ['deposit.received'] },
    });
    const endpoint = created.json as { id: string; secret: string };
    receiver.secrets.push(endpoint.secret);
    const [event] = await eventsListed(shop.token, 2);
    const id = event?.id as string;
    const stranger = await wallet('stranger');
    const theirs = (
      await call('POST', '/api/wallet/webhooks', { token: stranger.token, json: { url: receiver.url } })
    ).json as {
      id: string;
    };
    // Another's event: 404; another's endpoint: 422 naming it; another's replay: 404.
    expectProblem(
      await call('POST', `/api/wallet/events/${id}/redeliver`, {
        token: stranger.token,
        json: { webhookId: theirs.id },
      }),
      404,
    );
    expectProblem(
      await call('POST', `/api/wallet/events/${id}/redeliver`, {
        token: shop.token,
        json: { webhookId: theirs.id },
      }),
      422,
    );
    expectProblem(
      await call('POST', `/api/wallet/webhooks/${endpoint.id}/replay`, {
        token: stranger.token,
        json: { since: new Date().toISOString() },
      }),
      404,
    );
    const redelivered = await call('POST', `/api/wallet/events/${id}/redeliver`, {
      token: shop.token,
      json: { webhookId: endpoint.id },
    });
    expect(redelivered.status, redelivered.text).toBe(202);
    await receiver.until((received) => received.some((got) => got.id === id), 60_000);
    const got = receiver.received.find((one) => one.id === id);
    expect({ id: got?.id, type: got?.type, timestamp: got?.timestamp, data: got?.data }).toEqual(event);
  }, 120_000);

  it('refuses a replay from more than 30 days ago, in the future, or not RFC 3339, with a 422', async () => {
    const shop = await wallet('shop');
    const endpoint = (
      await call('POST', '/api/wallet/webhooks', { token: shop.token, json: { url: receiver.url } })
    ).json as { id: string };
    for (const since of [
      new Date(Date.now() - 31 * 86_400_000).toISOString(),
      new Date(Date.now() + 60_000).toISOString(),
      '2026-13-01',
      'yesterday',
    ]) {
      const problem = expectProblem(
        await call('POST', `/api/wallet/webhooks/${endpoint.id}/replay`, {
          token: shop.token,
          json: { since },
        }),
        422,
      );
      expect(JSON.stringify(problem)).toContain('/since');
    }
  });
});
