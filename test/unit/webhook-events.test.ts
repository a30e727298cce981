import { describe, expect, it } from 'vitest';
import { batchItem, entriesOfBatch } from '#shared/wallet/dynamodb/batch-items.ts';
import { entryItem, transferKey } from '#shared/wallet/dynamodb/keys.ts';
import { sideEntry } from '#shared/wallet/dynamodb/ledger-commit.ts';
import type { Matching } from '#shared/wallet/model/matching.ts';
import { factOfItem, factsOfBatchPosting } from '#shared/webhooks/dynamodb/ledger-facts.ts';
import { eventsOfFact, makeDeriveEvents } from '#shared/webhooks/events/derive-events.ts';
import type { EventStore, SubscriberStore } from '#shared/webhooks/events/ports.ts';
import type { LedgerFact } from '#shared/webhooks/model/ledger-fact.ts';
import { DERIVE_COMMIT_WITHIN_MS } from '#shared/webhooks/model/replay-settle.ts';
import { EVENT_ID, type WebhookEvent } from '#shared/webhooks/model/webhook-event.ts';

/*
 * Events from the ledger's items (issue 46): items made by the ledger's own item builders
 * (sideEntry, entryItem), read back as facts, turned into events; the deriving use case on an
 * in-memory store.
 */

const USD = { code: 'USD', decimals: 2 };
const AT = '2026-12-01T10:00:00.000Z';
const POSTED_AT = '2026-12-01T10:00:00.400Z';
const MATCH = { reference: 'INV-7', metadata: { order: '7' } };

const transfer = {
  transferId: 'a1b2c3d4-0000-4000-8000-000000000001',
  fromAddress: 'alice',
  toAddress: 'shop',
  amountMinor: 1234,
  currency: 'USD',
  createdAt: AT,
  ...MATCH,
};

function factOf(item: Record<string, unknown>): LedgerFact {
  const fact = factOfItem(item);
  if (fact === undefined || fact === 'malformed') throw new Error(`no fact in ${JSON.stringify(item)}`);
  return fact;
}

const payer = { account: 'W#alice', state: { exists: true, balance: 5000n, seq: 6 } };
const shop = { account: 'W#shop', state: { exists: true, balance: 100n, seq: 40 } };

/** The items a direct payment writes that the deriver reads: the payer's entry, the transfer, the recipient's entry. */
function directPayment() {
  const movement = { ...transfer, transferKind: 'transfer' as const };
  return {
    payerEntry: entryItem(sideEntry(movement, payer, 'out', { account: 'W#shop', seq: 41 }), false),
    record: {
      pk: transferKey(transfer.transferId),
      kind: 'transfer',
      transferKind: 'transfer',
      ...transfer,
      fromSeq: 7,
      toSeq: 41,
    },
    recipientEntry: entryItem(sideEntry(movement, shop, 'in', { account: 'W#alice', seq: 7 }), false),
  };
}

const parsed = (event: WebhookEvent) =>
  JSON.parse(event.body) as { type: string; timestamp: string; data: Record<string, unknown> };

describe('events of a payment', () => {
  it('a direct payment: transfer.sent to the payer, transfer.received and transfer.completed to the recipient, with seq and balanceAfter', () => {
    const { payerEntry, record, recipientEntry } = directPayment();
    const [sent] = eventsOfFact(factOf(payerEntry), USD);
    const [received] = eventsOfFact(factOf(record), USD);
    const [completed] = eventsOfFact(factOf(recipientEntry), USD);
    expect(sent?.address).toBe('alice');
    expect(parsed(sent as WebhookEvent)).toEqual({
      type: 'transfer.sent',
      timestamp: AT,
      data: {
        transferId: transfer.transferId,
        address: 'alice',
        counterparty: 'shop',
        direction: 'out',
        amount: 12.34,
        currency: 'USD',
        status: 'completed',
        createdAt: AT,
        ...MATCH,
        seq: 7,
        balanceAfter: 37.66,
      },
    });
    expect(parsed(received as WebhookEvent)).toMatchObject({
      type: 'transfer.received',
      data: { address: 'shop', counterparty: 'alice', status: 'completed', ...MATCH },
    });
    expect(parsed(received as WebhookEvent).data).not.toHaveProperty('seq');
    expect(parsed(completed as WebhookEvent)).toMatchObject({
      type: 'transfer.completed',
      data: { address: 'shop', seq: 41, balanceAfter: 13.34, status: 'completed', ...MATCH },
    });
    // The amounts as exact decimals in the text itself, as the rest of the API writes them.
    expect(sent?.body).toContain('"amount":12.34,');
    expect(completed?.body).toContain('"balanceAfter":13.34}');
  });

  it('a payment to a hot wallet: received pending at once, completed at its posting with the transfer’s reference looked up', () => {
    const movement = { ...transfer, via: 'clearing' as const, transferKind: 'transfer' as const };
    const payerEntry = entryItem(
      sideEntry(movement, payer, 'out', { account: 'CLEARING', address: 'shop' }),
      false,
    );
    const record = {
      pk: transferKey(transfer.transferId),
      kind: 'transfer',
      ...movement,
      fromSeq: 7,
    };
    // As the poster writes it: from the credit, which carries no reference or metadata.
    const { reference: _r, metadata: _m, ...bare } = movement;
    const posted = entryItem(
      {
        ...sideEntry(bare, shop, 'in', { account: 'CLEARING', seq: 7, address: 'alice' }),
        postedAt: POSTED_AT,
      },
      true,
    );
    expect(parsed(eventsOfFact(factOf(payerEntry), USD)[0] as WebhookEvent).data).toMatchObject({
      status: 'pending',
      counterparty: 'shop',
    });
    expect(parsed(eventsOfFact(factOf(record), USD)[0] as WebhookEvent)).toMatchObject({
      type: 'transfer.received',
      timestamp: AT,
      data: { status: 'pending' },
    });
    const [completed] = eventsOfFact(factOf(posted), USD, MATCH);
    expect(completed?.address).toBe('shop');
    expect(parsed(completed as WebhookEvent)).toMatchObject({
      type: 'transfer.completed',
      timestamp: POSTED_AT,
      data: { counterparty: 'alice', seq: 41, balanceAfter: 13.34, status: 'completed', ...MATCH },
    });
  });

  it('a deposit: deposit.received without a counterparty; the issuance side and the deposit record tell nobody', () => {
    const deposit = {
      transferId: 'd-1',
      transferKind: 'deposit' as const,
      amountMinor: 5,
      currency: 'USD',
      createdAt: AT,
    };
    const entry = entryItem(sideEntry(deposit, shop, 'in', { account: 'ISSUANCE', seq: 3 }), false);
    const issuance = entryItem(
      sideEntry(deposit, { account: 'ISSUANCE', state: { exists: true, balance: -5n, seq: 2 } }, 'out', {
        account: 'W#shop',
        seq: 41,
      }),
      false,
    );
    const [event] = eventsOfFact(factOf(entry), USD);
    expect(parsed(event as WebhookEvent)).toMatchObject({
      type: 'deposit.received',
      data: { address: 'shop', amount: 0.05, seq: 41 },
    });
    expect(parsed(event as WebhookEvent).data).not.toHaveProperty('counterparty');
    expect(factOfItem(issuance)).toBeUndefined();
    expect(
      factOfItem({
        pk: 'TRANSFER#d-1',
        kind: 'transfer',
        ...deposit,
        toAddress: 'shop',
      }),
    ).toBeUndefined();
  });

  it('one fact is one event id however often it is read; distinct facts and types have distinct ids', () => {
    const { payerEntry, record, recipientEntry } = directPayment();
    const ids = [payerEntry, record, recipientEntry].map((item) => eventsOfFact(factOf(item), USD)[0]?.id);
    const again = [payerEntry, record, recipientEntry].map(
      (item) => eventsOfFact(factOf(structuredClone(item)), USD)[0]?.id,
    );
    expect(again).toEqual(ids);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(EVENT_ID);
  });

  it('names an entry or transfer without its fields malformed, and ignores other items', () => {
    const { payerEntry, record } = directPayment();
    expect(factOfItem({ ...payerEntry, seq: 'seven' })).toBe('malformed');
    expect(factOfItem({ ...record, amountMinor: undefined })).toBe('malformed');
    expect(factOfItem({ pk: 'WALLET#shop', kind: 'wallet', balance: 1 })).toBeUndefined();
  });

  it('writes a balance beyond 2^53 exactly', () => {
    const big = { account: 'W#shop', state: { exists: true, balance: 2n ** 60n, seq: 1 } };
    const item = entryItem(
      sideEntry({ ...transfer, transferKind: 'transfer' }, big, 'in', { account: 'W#alice', seq: 7 }),
      false,
    );
    expect(eventsOfFact(factOf(item), USD)[0]?.body).toContain(
      `"balanceAfter":${(2n ** 60n + 1234n) / 100n}.${String((2n ** 60n + 1234n) % 100n).padStart(2, '0')}}`,
    );
  });
});

describe('deriving a batch', () => {
  function store() {
    const stored = new Map<string, { event: WebhookEvent; endpoints: readonly string[] }>();
    const requests: number[] = [];
    const events: EventStore = {
      async recordAll(entries) {
        requests.push(entries.length);
        return entries.map(({ event, endpointIds }) => {
          if (stored.has(event.id)) return 'exists';
          stored.set(event.id, { event, endpoints: endpointIds });
          return 'recorded';
        });
      },
      async addLiveTasks(entries) {
        // On condition, as the DynamoDB store's: a task stored before stands.
        for (const { event, endpointIds } of entries) {
          const known = stored.get(event.id) as { event: WebhookEvent; endpoints: readonly string[] };
          const added = endpointIds.filter((id) => !known.endpoints.includes(id));
          stored.set(event.id, { event, endpoints: [...known.endpoints, ...added] });
        }
      },
    };
    return { stored, events, requests };
  }
  const noLookup = { matching: async () => new Map<string, Matching>() };
  const subscribedShop = (reads: (readonly string[])[] = []): SubscriberStore => ({
    async subscriptions(addresses) {
      reads.push(addresses);
      return new Map(
        addresses.map((address) => [
          address,
          address === 'shop'
            ? [
                { endpointId: 'whep_1', eventTypes: ['transfer.received', 'transfer.completed'] },
                { endpointId: 'whep_2', eventTypes: ['transfer.completed'] },
              ]
            : [],
        ]),
      );
    },
  });

  it('stores each event once with a task per endpoint subscribed to its type, in one request', async () => {
    const { stored, events, requests } = store();
    const reads: (readonly string[])[] = [];
    const derive = makeDeriveEvents({
      events,
      transfers: noLookup,
      currency: USD,
      endpoints: subscribedShop(reads),
      // Committed within a second of the read: the endpoints are not read again.
      clock: { now: () => 0 },
    });
    const { payerEntry, record, recipientEntry } = directPayment();
    const facts = [payerEntry, record, recipientEntry, recipientEntry].map(factOf);
    expect(await derive(facts)).toEqual({ recorded: 3, tasks: 3, failedFrom: undefined });
    expect(await derive(facts)).toEqual({ recorded: 0, tasks: 0, failedFrom: undefined });
    expect([...stored.values()].map((s) => [s.event.type, s.endpoints])).toEqual([
      ['transfer.sent', []],
      ['transfer.received', ['whep_1']],
      ['transfer.completed', ['whep_1', 'whep_2']],
    ]);
    // The fact given twice is one event; every wallet's endpoints in one read, every event in one
    // store. Given again (the stream's retry), the events are found stored, and the endpoints read
    // once more for the tasks a first commit may lack (none here).
    expect(requests).toEqual([3, 3]);
    expect(reads.map((addresses) => [...new Set(addresses)].sort())).toEqual([
      ['alice', 'shop'],
      ['alice', 'shop'],
      ['alice', 'shop'],
    ]);
  });

  /**
   * The shop's endpoints as its owner enables whep_1 between the deriver's read and its commit
   * (`commitMs` after the read, on the deriver's clock); a second read throws when `reread` does.
   */
  function enabledDuringCommit(commitMs: number, reread: 'answers' | 'throws' | 'throws once' = 'answers') {
    const { stored, events } = store();
    const clock = { at: 0, now: () => clock.at };
    const shop = subscribedShop();
    let reads = 0;
    let lateWrites = 0;
    const derive = makeDeriveEvents({
      events: {
        ...events,
        async recordAll(entries) {
          clock.at += commitMs;
          return events.recordAll(entries);
        },
        async addLiveTasks(entries) {
          if (reread === 'throws' || (reread === 'throws once' && ++lateWrites === 1)) {
            throw new Error('throttled');
          }
          return events.addLiveTasks(entries);
        },
      },
      transfers: noLookup,
      currency: USD,
      endpoints: {
        subscriptions: async (addresses) =>
          ++reads === 1 ? new Map(addresses.map((address) => [address, []])) : shop.subscriptions(addresses),
      },
      clock,
    });
    const { payerEntry, record, recipientEntry } = directPayment();
    const facts = [payerEntry, record, recipientEntry].map(factOf);
    const endpointsOf = () => [...stored.values()].map((s) => [s.event.type, s.endpoints]);
    return { derive: () => derive(facts), endpointsOf, reads: () => reads };
  }

  it('gives an endpoint enabled during a commit slower than DERIVE_COMMIT_WITHIN_MS its events, by tasks written after it', async () => {
    const { derive, endpointsOf, reads } = enabledDuringCommit(DERIVE_COMMIT_WITHIN_MS + 1);
    expect(await derive()).toEqual({ recorded: 3, tasks: 0, failedFrom: undefined });
    // As first built, none: read before the endpoint was enabled, the events got no task, and a
    // replay asked after enabling it had looked for them before they were committed.
    expect(endpointsOf()).toEqual([
      ['transfer.sent', []],
      ['transfer.received', ['whep_1']],
      ['transfer.completed', ['whep_1', 'whep_2']],
    ]);
    expect(reads()).toBe(2);
  });

  it('reads the endpoints once when the commit came within DERIVE_COMMIT_WITHIN_MS: a replay asked meanwhile finds the events', async () => {
    const { derive, endpointsOf, reads } = enabledDuringCommit(DERIVE_COMMIT_WITHIN_MS);
    await derive();
    expect(endpointsOf().every(([, endpoints]) => (endpoints as string[]).length === 0)).toBe(true);
    expect(reads()).toBe(1);
  });

  it('hands the batch back from its first event stored now when the late tasks could not be written, and writes them when it is given again', async () => {
    const { derive, endpointsOf } = enabledDuringCommit(DERIVE_COMMIT_WITHIN_MS + 1, 'throws once');
    expect(await derive()).toEqual({ recorded: 3, tasks: 0, failedFrom: 0 });
    // Given again, the events are found stored. As first built, their tasks were written never.
    expect(await derive()).toEqual({ recorded: 0, tasks: 0, failedFrom: undefined });
    expect(endpointsOf()).toEqual([
      ['transfer.sent', []],
      ['transfer.received', ['whep_1']],
      ['transfer.completed', ['whep_1', 'whep_2']],
    ]);
  });

  it('names the first fact whose events could not be stored, and stores the others', async () => {
    const { stored, events } = store();
    const derive = makeDeriveEvents({
      events: {
        ...events,
        async recordAll(entries) {
          const refused = entries.filter(({ event }) => event.type === 'transfer.received');
          const outcomes = await events.recordAll(entries.filter((entry) => !refused.includes(entry)));
          let next = 0;
          return entries.map((entry) =>
            refused.includes(entry) ? { failed: new Error('throttled') } : (outcomes[next++] as 'recorded'),
          );
        },
      },
      transfers: noLookup,
      currency: USD,
      endpoints: subscribedShop(),
    });
    const { payerEntry, record, recipientEntry } = directPayment();
    const result = await derive([payerEntry, record, recipientEntry].map(factOf));
    expect(result.failedFrom).toBe(1);
    expect([...stored.values()].map((s) => s.event.type)).toEqual(['transfer.sent', 'transfer.completed']);
  });

  it('stores nothing and hands the batch back from its first fact when the endpoints cannot be read', async () => {
    const { stored, events } = store();
    const derive = makeDeriveEvents({
      events,
      transfers: noLookup,
      currency: USD,
      endpoints: { subscriptions: () => Promise.reject(new Error('throttled')) },
    });
    const { payerEntry, record, recipientEntry } = directPayment();
    expect(await derive([payerEntry, record, recipientEntry].map(factOf))).toEqual({
      recorded: 0,
      tasks: 0,
      failedFrom: 0,
    });
    expect(stored.size).toBe(0);
  });

  /** A batch of two credits to the shop, posted at its seq 41: its item as posted, and its completion's entries. */
  function postedBatch() {
    const credits = [
      { transferId: 'b0000000-0000-4000-8000-000000000001', fromAccount: 'W#alice', fromSeq: 7 },
      { transferId: 'b0000000-0000-4000-8000-000000000002', fromAccount: 'W#bob', fromSeq: 3 },
    ].map((credit) => ({ ...credit, amountMinor: 250, currency: 'USD', createdAt: AT }));
    const batch = { batchId: 'batch-1', address: 'shop', credits };
    const posting = { firstSeq: 41, balanceBefore: 100n, postedAt: POSTED_AT };
    const item = { ...batchItem(batch, AT), ...posting };
    const completion = entriesOfBatch(batch, posting, POSTED_AT).map((entry) =>
      factOf(entryItem({ ...entry, batchId: batch.batchId }, true)),
    );
    return { item, completion };
  }

  it("tells a batch's credits at its posting, and its completion's entries again asking for no task", async () => {
    const { item, completion } = postedBatch();
    const atPosting = factsOfBatchPosting(item);
    if (atPosting === 'malformed') throw new Error('malformed');
    // The same facts, from the posting as from the entries the completion writes: one id each.
    expect(atPosting.map((fact) => ({ ...fact, retold: true }))).toEqual(completion);
    const { stored, events } = store();
    let taskWrites = 0;
    const derive = makeDeriveEvents({
      events: {
        ...events,
        async addLiveTasks(entries) {
          taskWrites++;
          return events.addLiveTasks(entries);
        },
      },
      transfers: noLookup,
      currency: USD,
      endpoints: subscribedShop(),
      clock: { now: () => 0 },
    });
    expect(await derive(atPosting)).toEqual({ recorded: 2, tasks: 4, failedFrom: undefined });
    const told = [...stored.values()];
    expect(told.map((s) => [parsed(s.event).data.seq, s.event.timestamp, s.endpoints])).toEqual([
      [41, POSTED_AT, ['whep_1', 'whep_2']],
      [42, POSTED_AT, ['whep_1', 'whep_2']],
    ]);
    // The completion's entries: found stored, and their tasks left to the posting that wrote them.
    expect(await derive(completion)).toEqual({ recorded: 0, tasks: 0, failedFrom: undefined });
    expect(taskWrites).toBe(0);
    expect([...stored.values()]).toEqual(told);
    // A batch posted by code that told no postings: its completion's entries are told, in full.
    const { stored: fresh, events: freshEvents } = store();
    const before = makeDeriveEvents({
      events: freshEvents,
      transfers: noLookup,
      currency: USD,
      endpoints: subscribedShop(),
      clock: { now: () => 0 },
    });
    expect(await before(completion)).toEqual({ recorded: 2, tasks: 4, failedFrom: undefined });
    expect([...fresh.values()].map((s) => s.event)).toEqual(told.map((s) => s.event));
  });
});
