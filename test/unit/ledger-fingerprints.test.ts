import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AccountTally, mustReadOn, provenPrefix } from '#shared/wallet/audit/accounts.ts';
import {
  Fingerprint,
  IN_ENTRY,
  MovementSums,
  OUT_ENTRY,
  TRANSFER_RECORD,
} from '#shared/wallet/audit/fingerprints.ts';
import {
  type Credit,
  type Entry,
  movementOfEntry,
  movementOfTransfer,
  type Transfer,
} from '#shared/wallet/audit/records.ts';
import { CLEARING_ACCOUNT } from '#shared/wallet/model/accounts.ts';

/*
 * The fingerprints the ledger audit folds settled items into instead of keeping them: a chain
 * proven only when it really holds, and movement sums that balance only when every movement has
 * its three agreeing items. Checked on ledgers drawn at random, in any order of arrival.
 */

const ACCOUNT = 'W#someone';

/** A valid chain of entries 1..n of one account, from the signed amounts given. */
function chain(amounts: readonly number[]): Entry[] {
  let balance = 0;
  return amounts.map((amount, i) => {
    balance += amount;
    return {
      account: ACCOUNT,
      seq: i + 1,
      transferId: `t${i}`,
      direction: amount < 0 ? 'out' : 'in',
      amountMinor: Math.abs(amount),
      balanceAfter: balance,
      counterpartyAccount: 'W#other',
      counterpartySeq: i + 1,
      writtenAt: 0,
    };
  });
}

/** What the audit makes of `folded` entries filed in any order, then `kept` ones (ascending). */
function prove(folded: readonly Entry[], kept: readonly Entry[] = [], fp = new Fingerprint()) {
  const tally = new AccountTally();
  for (const entry of folded) tally.fold(fp, entry);
  return provenPrefix(tally, kept, fp);
}

const amounts = fc.array(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).filter((n) => n !== 0),
  { minLength: 1, maxLength: 40 },
);

describe('the chain fingerprint of an account', () => {
  it('proves a whole chain, whatever order its entries arrive in', () => {
    const shuffledChain = amounts.chain((drawn) => {
      const entries = chain(drawn);
      return fc.tuple(
        fc.constant(entries),
        fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }),
      );
    });
    fc.assert(
      fc.property(shuffledChain, ([entries, arrived]) => {
        const last = entries.at(-1) as Entry;
        expect(prove(arrived)).toEqual({ seq: last.seq, balance: BigInt(last.balanceAfter) });
      }),
    );
  });

  it('proves nothing once one entry states another amount or balance', () => {
    fc.assert(
      fc.property(amounts, fc.nat(), fc.boolean(), (drawn, at, amountOrBalance) => {
        const entries = chain(drawn);
        const i = at % entries.length;
        const entry = entries[i] as Entry;
        entries[i] = amountOrBalance
          ? { ...entry, amountMinor: entry.amountMinor + 1 }
          : { ...entry, balanceAfter: Number(entry.balanceAfter) + 1 };
        expect(prove(entries)).toEqual({ seq: 0, balance: 0n });
      }),
    );
  });

  it('proves nothing across a gap or a repeated seq among the folded entries', () => {
    fc.assert(
      fc.property(
        amounts.filter((a) => a.length >= 2),
        fc.nat(),
        (drawn, at) => {
          const entries = chain(drawn);
          const i = at % (entries.length - 1);
          const withGap = entries.filter((_, k) => k !== i);
          expect(prove(withGap)).toEqual({ seq: 0, balance: 0n });
          const repeated = [...entries, { ...(entries[i] as Entry) }];
          expect(prove(repeated)).toEqual({ seq: 0, balance: 0n });
        },
      ),
    );
  });

  it('proves up to the gap the scan left among entries committed while it ran', () => {
    const entries = chain([500, -100, 20, -30, 7, -2, 1, 1]);
    // Folded 1..4 (settled), kept 5, 6 and 8: entry 7 was passed too early.
    const proven = prove(entries.slice(0, 4), [entries[4], entries[5], entries[7]] as Entry[]);
    expect(proven).toEqual({ seq: 6, balance: BigInt(entries[5]?.balanceAfter as number) });
    expect(prove([], [])).toEqual({ seq: 0, balance: 0n });
  });

  it('leaves an account as the scan saw it only when every entry it folded lies within its cut', () => {
    // The scan saw the account item at `cut` (its balance then) and folded any subset of its
    // entries: some written before the item was read, some after (a wallet paid while the scan ran).
    const scanned = amounts.chain((drawn) => {
      const entries = chain(drawn);
      return fc.tuple(
        fc.constant(entries),
        fc.subarray(entries),
        fc.integer({ min: 0, max: entries.length }),
      );
    });
    fc.assert(
      fc.property(scanned, ([entries, folded, cut]) => {
        const fp = new Fingerprint();
        const tally = new AccountTally();
        for (const entry of folded) tally.fold(fp, entry);
        tally.cut = cut;
        tally.balance = BigInt(cut === 0 ? 0 : (entries[cut - 1] as Entry).balanceAfter);
        if (!mustReadOn(tally, provenPrefix(tally, [], fp), [])) {
          expect(folded.every((entry) => entry.seq <= cut)).toBe(true);
        }
      }),
    );
    // The case a live audit met: a wallet read before its first entry, then its second folded.
    const [, second] = chain([5, 7]) as [Entry, Entry];
    const tally = new AccountTally();
    const fp = new Fingerprint();
    tally.fold(fp, second);
    tally.cut = 0;
    expect(mustReadOn(tally, provenPrefix(tally, [], fp), [])).toBe(true);
  });

  it('is keyed afresh for every audit: two audits fingerprint the same entry apart', () => {
    const [entry] = chain([5]) as [Entry];
    const first = new AccountTally();
    const second = new AccountTally();
    first.fold(new Fingerprint(), entry);
    second.fold(new Fingerprint(), entry);
    expect(first.terms).not.toBe(second.terms);
  });
});

const movement = fc.record({
  transferId: fc.uuid(),
  amountMinor: fc.integer({ min: 1, max: 10 ** 15 }),
  from: fc.integer({ min: 0, max: 9 }),
  to: fc.integer({ min: 0, max: 9 }),
  fromSeq: fc.integer({ min: 1, max: 1_000 }),
  toSeq: fc.integer({ min: 1, max: 1_000 }),
});
type Movement = typeof movement extends fc.Arbitrary<infer M> ? M : never;

/** A movement's three items, as stored. */
function itemsOf(m: Movement): { out: Entry; into: Entry; record: Transfer } {
  const [from, to] = [`W#w${m.from}`, `W#w${m.to}`];
  const common = { transferId: m.transferId, amountMinor: m.amountMinor, balanceAfter: 0, writtenAt: 0 };
  return {
    out: {
      ...common,
      account: from,
      seq: m.fromSeq,
      direction: 'out',
      counterpartyAccount: to,
      counterpartySeq: m.toSeq,
    },
    into: {
      ...common,
      account: to,
      seq: m.toSeq,
      direction: 'in',
      counterpartyAccount: from,
      counterpartySeq: m.fromSeq,
    },
    record: {
      transferId: m.transferId,
      transferKind: 'transfer',
      amountMinor: m.amountMinor,
      fromAddress: `w${m.from}`,
      toAddress: `w${m.to}`,
      fromSeq: m.fromSeq,
      toSeq: m.toSeq,
    },
  };
}

function sumsOf(items: readonly { out?: Entry; into?: Entry; record?: Transfer }[], fp: Fingerprint) {
  const sums = new MovementSums(64);
  for (const { out, into, record } of items) {
    if (out) sums.add(OUT_ENTRY, out.transferId, fp.of(movementOfEntry(out)));
    if (into) sums.add(IN_ENTRY, into.transferId, fp.of(movementOfEntry(into)));
    if (record) sums.add(TRANSFER_RECORD, record.transferId, fp.of(movementOfTransfer(record)));
  }
  return sums;
}

describe('the movement sums of the settled movements', () => {
  it('balance when every movement has its out entry, in entry and record', () => {
    fc.assert(
      fc.property(fc.array(movement, { maxLength: 50 }), (movements) => {
        const items = movements.map(itemsOf);
        // Each item filed on its own, in reverse: the sums do not depend on order or grouping.
        const apart = items.flatMap(({ out, into, record }) => [{ out }, { into }, { record }]).reverse();
        expect(sumsOf(apart, new Fingerprint()).unbalanced()).toEqual(new Set());
      }),
    );
  });

  it('name the bucket of a movement one of whose items is missing or disagrees', () => {
    fc.assert(
      fc.property(
        fc.array(movement, { minLength: 1, maxLength: 50 }),
        fc.nat(),
        fc.constantFrom('no in entry', 'another amount', 'another seq', 'record of a deposit'),
        (movements, at, fault) => {
          const items = movements.map(itemsOf);
          const i = at % items.length;
          const { out, into, record } = items[i] as ReturnType<typeof itemsOf>;
          items[i] = {
            out,
            into:
              fault === 'no in entry'
                ? (undefined as unknown as Entry)
                : fault === 'another amount'
                  ? { ...into, amountMinor: into.amountMinor + 1 }
                  : fault === 'another seq'
                    ? { ...into, seq: into.seq + 1 }
                    : into,
            record: fault === 'record of a deposit' ? { ...record, transferKind: 'deposit' } : record,
          };
          const sums = sumsOf(items, new Fingerprint());
          expect(sums.unbalanced()).toContain(sums.bucketOf(out.transferId));
        },
      ),
    );
  });
});

const payment = fc.record({
  transferId: fc.uuid(),
  amountMinor: fc.integer({ min: 1, max: 10 ** 15 }),
  from: fc.integer({ min: 0, max: 9 }),
  to: fc.integer({ min: 0, max: 9 }),
  fromSeq: fc.integer({ min: 1, max: 1_000 }),
  /** Where the poster posted it; undefined: still in transit. */
  postedSeq: fc.option(fc.integer({ min: 1, max: 1_000 }), { nil: undefined }),
});
type Payment = typeof payment extends fc.Arbitrary<infer P> ? P : never;

/** A payment through the clearing account, as stored: payer's entry, record, credit, recipient's entry once posted. */
function paymentItems(p: Payment): { out: Entry; record: Transfer; credit: Credit; into?: Entry } {
  const [from, to] = [`w${p.from}`, `w${p.to}`];
  const common = { transferId: p.transferId, amountMinor: p.amountMinor, balanceAfter: 0, writtenAt: 0 };
  return {
    out: {
      ...common,
      account: `W#${from}`,
      seq: p.fromSeq,
      direction: 'out',
      counterpartyAccount: CLEARING_ACCOUNT,
      counterpartyAddress: to,
    },
    record: {
      transferId: p.transferId,
      transferKind: 'transfer',
      amountMinor: p.amountMinor,
      fromAddress: from,
      toAddress: to,
      fromSeq: p.fromSeq,
      via: 'clearing',
    },
    credit: {
      transferId: p.transferId,
      fromAccount: `W#${from}`,
      fromSeq: p.fromSeq,
      toAccount: `W#${to}`,
      amountMinor: p.amountMinor,
      createdAt: 0,
      ...(p.postedSeq === undefined ? {} : { postedSeq: p.postedSeq, postedAt: 0 }),
    },
    ...(p.postedSeq === undefined
      ? {}
      : {
          into: {
            ...common,
            account: `W#${to}`,
            seq: p.postedSeq,
            direction: 'in' as const,
            counterpartyAccount: CLEARING_ACCOUNT,
            counterpartySeq: p.fromSeq,
            counterpartyAddress: from,
          },
        }),
  };
}

function paymentSums(items: readonly Partial<ReturnType<typeof paymentItems>>[], fp: Fingerprint) {
  const sums = new MovementSums(64);
  for (const { out, record, credit, into } of items) {
    if (out) sums.add(OUT_ENTRY, out.transferId, fp.of(movementOfEntry(out)));
    if (record) sums.add(TRANSFER_RECORD, record.transferId, fp.of(movementOfTransfer(record)));
    if (credit) sums.addCredit(fp, credit, credit.postedSeq !== undefined);
    if (into) sums.add(IN_ENTRY, into.transferId, fp.of(movementOfEntry(into)));
  }
  return sums;
}

describe('the movement sums of payments through the clearing account', () => {
  it('balance when every payment has its entry, record and credit, and every posted credit its one entry', () => {
    fc.assert(
      fc.property(
        fc.array(payment, { maxLength: 50 }),
        fc.array(movement, { maxLength: 10 }),
        (payments, direct) => {
          const fp = new Fingerprint();
          const sums = paymentSums(payments.map(paymentItems).reverse(), fp);
          for (const { out, into, record } of direct.map(itemsOf)) {
            sums.add(OUT_ENTRY, out.transferId, fp.of(movementOfEntry(out)));
            sums.add(IN_ENTRY, into.transferId, fp.of(movementOfEntry(into)));
            sums.add(TRANSFER_RECORD, record.transferId, fp.of(movementOfTransfer(record)));
          }
          expect(sums.unbalanced()).toEqual(new Set());
        },
      ),
    );
  });

  it('name the bucket of a credit lost, altered, posted twice, or marked posted without its entry', () => {
    const fault = fc.constantFrom(
      'credit deleted',
      'credit amount altered',
      'posted twice',
      'marked posted, no entry',
      'entry without the credit marked',
      'a direct in entry instead',
    );
    fc.assert(
      fc.property(
        fc.array(payment, { minLength: 1, maxLength: 30 }),
        fc.nat(),
        fault,
        (payments, at, kind) => {
          const items: Partial<ReturnType<typeof paymentItems>>[] = payments.map(paymentItems);
          const i = at % items.length;
          const target = items[i] as ReturnType<typeof paymentItems>;
          const posted = target.into ?? {
            ...target.out,
            account: target.credit.toAccount,
            seq: 7,
            direction: 'in' as const,
            counterpartySeq: target.out.seq,
            counterpartyAddress: target.record.fromAddress,
          };
          switch (kind) {
            case 'credit deleted':
              items[i] = { ...target, credit: undefined, into: undefined };
              break;
            case 'credit amount altered':
              items[i] = {
                ...target,
                credit: { ...target.credit, amountMinor: target.credit.amountMinor + 1 },
              };
              break;
            case 'posted twice':
              items.push({ into: { ...posted, seq: posted.seq + 1 } });
              if (!target.into)
                items[i] = { ...target, credit: { ...target.credit, postedSeq: 7 }, into: posted };
              break;
            case 'marked posted, no entry':
              items[i] = { ...target, credit: { ...target.credit, postedSeq: posted.seq }, into: undefined };
              break;
            case 'entry without the credit marked': {
              const { postedSeq: _, ...unmarked } = target.credit;
              items[i] = { ...target, credit: unmarked, into: posted };
              break;
            }
            case 'a direct in entry instead':
              items[i] = {
                ...target,
                credit: undefined,
                into: { ...posted, counterpartyAccount: target.out.account, counterpartyAddress: undefined },
              };
              break;
          }
          const sums = paymentSums(items, new Fingerprint());
          expect(sums.unbalanced()).toContain(sums.bucketOf(target.out.transferId));
        },
      ),
    );
  });
});
