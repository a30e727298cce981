/**
 * Events from the ledger (issue 46): what one inserted item of the wallets table tells which
 * wallet, and the use case that stores each event once with a delivery task per endpoint. No I/O
 * of its own; the stream adapter is functions/derive-events/handler.ts.
 */
import type { Matching } from '../../wallet/model/matching.ts';
import { matchingOf } from '../../wallet/model/matching.ts';
import { type Currency, moneyJson } from '../../wallet/model/money.ts';
import type { WebhookEventType } from '../model/event-types.ts';
import type { EntryFact, LedgerFact } from '../model/ledger-fact.ts';
import { DERIVE_COMMIT_WITHIN_MS } from '../model/replay-settle.ts';
import { eventIdOf, type WebhookEvent } from '../model/webhook-event.ts';
import type { EventStore, SubscriberStore, Subscription, TransferMatchingStore } from './ports.ts';

/**
 * The `data` of an event: the wallet told, its counterparty, the exact amount, the status and
 * what the payer matched it with; for an event that records an entry of the wallet, that entry's
 * `seq` (gap-free per wallet: a receiver that sees 41 then 43 knows it missed 42) and `balanceAfter`.
 */
function body(
  type: WebhookEventType,
  timestamp: string,
  fields: {
    transferId: string;
    address: string;
    counterparty?: string | undefined;
    direction: 'in' | 'out';
    amountMinor: number;
    currency: Currency;
    status: 'pending' | 'completed';
    createdAt: string;
    matching: Matching;
    entry?: { seq: number; balanceAfterMinor: bigint } | undefined;
  },
): string {
  const { currency, entry } = fields;
  const data = {
    transferId: fields.transferId,
    address: fields.address,
    ...(fields.counterparty === undefined ? {} : { counterparty: fields.counterparty }),
    direction: fields.direction,
    amount: moneyJson(fields.amountMinor, currency),
    currency: currency.code,
    status: fields.status,
    createdAt: fields.createdAt,
    ...matchingOf(fields.matching),
    ...(entry ? { seq: entry.seq, balanceAfter: moneyJson(entry.balanceAfterMinor, currency) } : {}),
  };
  // Serialised once, here: this text is what is stored, signed and sent, byte for byte.
  return JSON.stringify({ type, timestamp, data });
}

/** The event an entry records, if any: the payer's side, a credit becoming spendable, a deposit. */
function entryEvent(fact: EntryFact, currency: Currency, matching: Matching): WebhookEvent | undefined {
  const type: WebhookEventType | undefined =
    fact.movement === 'deposit'
      ? fact.direction === 'in'
        ? 'deposit.received'
        : undefined
      : fact.direction === 'out'
        ? 'transfer.sent'
        : 'transfer.completed';
  if (!type) return undefined;
  // A credit is spendable when its entry is written: at the payment for a direct credit, at the
  // posting for one through the clearing account.
  const timestamp = fact.postedAt ?? fact.createdAt;
  const status = type === 'transfer.sent' && fact.viaClearing ? 'pending' : 'completed';
  return {
    id: eventIdOf(type, fact.factKey),
    type,
    address: fact.address,
    timestamp,
    body: body(type, timestamp, {
      ...fact,
      currency: { ...currency, code: fact.currency },
      status,
      matching,
      entry: fact,
    }),
  };
}

/** The events a fact gives: entries as above; an accepted transfer tells its recipient at once. */
export function eventsOfFact(fact: LedgerFact, currency: Currency, looked?: Matching): WebhookEvent[] {
  if (fact.kind === 'entry') {
    const event = entryEvent(fact, currency, fact.postedAt === undefined ? fact : (looked ?? {}));
    return event ? [event] : [];
  }
  const type = 'transfer.received';
  return [
    {
      id: eventIdOf(type, fact.transferId),
      type,
      address: fact.toAddress,
      timestamp: fact.createdAt,
      body: body(type, fact.createdAt, {
        ...fact,
        address: fact.toAddress,
        counterparty: fact.fromAddress,
        direction: 'in',
        currency: { ...currency, code: fact.currency },
        status: fact.viaClearing ? 'pending' : 'completed',
        matching: fact,
      }),
    },
  ];
}

export interface DeriveEventsDependencies {
  readonly events: EventStore;
  readonly endpoints: SubscriberStore;
  readonly transfers: TransferMatchingStore;
  readonly currency: Currency;
  /** Milliseconds, for how far apart the endpoints' read and the events' commit were. */
  readonly clock?: { now(): number };
  /** Read and commit further apart than this, the endpoints are read again (../model/replay-settle.ts). */
  readonly commitWithinMs?: number;
}

export interface DeriveResult {
  /** Events stored now (not stored before). */
  readonly recorded: number;
  /** Delivery tasks created with them. */
  readonly tasks: number;
  /** The index of the first fact whose events could not be stored: the stream delivers again from there. */
  readonly failedFrom?: number | undefined;
}

/**
 * Stores the events of a batch of facts, each once, with a delivery task per endpoint of the
 * wallet subscribed to its type at that moment (an endpoint registered later gets it by replay;
 * one registered or enabled during a slow commit, by a task written after it).
 * Posted credits' entries do not carry the payment's reference and metadata: one read of their
 * transfers, at the same time as one of the endpoint sets of every wallet told; then the events,
 * many to a transaction. A batch costs a few requests, not a few per event.
 */
export function makeDeriveEvents({
  events,
  endpoints,
  transfers,
  currency,
  clock = performance,
  commitWithinMs = DERIVE_COMMIT_WITHIN_MS,
}: DeriveEventsDependencies) {
  /** Who takes an event, as `subscriptions` says. */
  const takers = (subscriptions: ReadonlyMap<string, readonly Subscription[]>, event: WebhookEvent) =>
    (subscriptions.get(event.address) ?? []).flatMap((subscription) =>
      subscription.eventTypes.includes(event.type) ? [subscription.endpointId] : [],
    );

  /**
   * The live tasks of stored events for the endpoints that take them as read now, beside those
   * `written` with each: after a slow commit, for the endpoints enabled (or registered) since the
   * read; for an event found stored, every one (a first commit's tasks stand, by their condition).
   * Answers the events whose tasks could not be written.
   */
  async function addLate(
    stored: readonly { readonly event: WebhookEvent; readonly written: readonly string[] }[],
  ): Promise<ReadonlySet<WebhookEvent>> {
    try {
      const now = await endpoints.subscriptions(stored.map(({ event }) => event.address));
      const late = stored.flatMap(({ event, written }) => {
        const missed = takers(now, event).filter((id) => !written.includes(id));
        return missed.length > 0 ? [{ event, endpointIds: missed }] : [];
      });
      if (late.length > 0) await events.addLiveTasks(late);
      return new Set();
    } catch {
      return new Set(stored.map(({ event }) => event));
    }
  }

  return async (facts: readonly LedgerFact[]): Promise<DeriveResult> => {
    const posted = facts.flatMap((fact) =>
      fact.kind === 'entry' && fact.postedAt !== undefined ? [fact.transferId] : [],
    );
    const seen = new Set<string>();
    const work: { readonly event: WebhookEvent; readonly index: number }[] = [];
    let looked: ReadonlyMap<string, Matching>;
    let subscriptions: ReadonlyMap<string, readonly Subscription[]>;
    const readAt = clock.now();
    try {
      // Both reads at once: the wallets told are known from the facts, before their events are.
      [looked, subscriptions] = await Promise.all([
        posted.length > 0 ? transfers.matching(posted) : new Map<string, Matching>(),
        endpoints.subscriptions(facts.map((fact) => (fact.kind === 'entry' ? fact.address : fact.toAddress))),
      ]);
      facts.forEach((fact, index) => {
        for (const event of eventsOfFact(
          fact,
          currency,
          fact.kind === 'entry' ? looked.get(fact.transferId) : undefined,
        )) {
          // A fact twice in one batch is one event: a transaction may not name an item twice.
          if (!seen.has(event.id)) work.push({ event, index });
          seen.add(event.id);
        }
      });
    } catch {
      // Nothing stored: the stream delivers the batch again from its first fact.
      return { recorded: 0, tasks: 0, failedFrom: facts.length > 0 ? 0 : undefined };
    }
    const entries = work.map(({ event }) => ({ event, endpointIds: takers(subscriptions, event) }));
    const outcomes = await events.recordAll(entries);
    let recorded = 0;
    let tasks = 0;
    let failedFrom: number | undefined;
    const failed = (at: number) => {
      const index = work[at]?.index ?? 0;
      if (failedFrom === undefined || index < failedFrom) failedFrom = index;
    };
    outcomes.forEach((outcome, at) => {
      if (outcome === 'recorded') {
        recorded++;
        tasks += entries[at]?.endpointIds.length ?? 0;
      } else if (outcome !== 'exists') failed(at);
    });
    // Found stored: the batch given again, after a slow commit whose late tasks failed, or a commit
    // that landed after its tries had given up. Its tasks are written then, on a read after that
    // commit: as first built, none (review helper-37). Stored now, only after a slow commit.
    // A batch completion's entries tell again what its posting told: found stored, their tasks are
    // the posting's, whose record the stream gives again until they are written. Read and written
    // again here, they cost a conditional write per event and endpoint, all refused, at every
    // completion (review helper-55).
    const retold = (at: number) => {
      const fact = facts[work[at]?.index ?? -1];
      return fact?.kind === 'entry' && fact.retold === true;
    };
    const slow = clock.now() - readAt > commitWithinMs;
    const late = entries.flatMap((entry, at) =>
      (outcomes[at] === 'exists' && !retold(at)) || (slow && outcomes[at] === 'recorded')
        ? [{ event: entry.event, written: outcomes[at] === 'exists' ? [] : entry.endpointIds }]
        : [],
    );
    if (late.length > 0) {
      const unwritten = await addLate(late);
      entries.forEach((entry, at) => {
        if (unwritten.has(entry.event)) failed(at);
      });
    }
    return { recorded, tasks, failedFrom };
  };
}
