import { describe, expect, it } from 'vitest';
import { InvalidParameterError, NotFoundError } from '#shared/errors.ts';
import { encodeCursor } from '#shared/wallet/history/history-cursor.ts';
import type { MovementRecord, PendingCredit } from '#shared/wallet/history/ports.ts';
import { makeGetTransfer, makeListTransfers } from '#shared/wallet/history/transfer-history.ts';
import { CLEARING_ACCOUNT, ISSUANCE_ACCOUNT, walletAccount } from '#shared/wallet/model/accounts.ts';
import type { EntryRecord } from '#shared/wallet/model/entry.ts';

/** A history of `count` entries of alice (1 a deposit, then transfers with bob), in memory. */
function historyOf(
  count: number,
  inTransit: { payments?: string[]; credits?: PendingCredit[] } = {},
  /** Entries the index does not have yet: its copies arrive one by one, in no promised order. */
  lagging = new Set<number>(),
  /** Numbers a posted batch took whose entries are not written yet: in neither the index nor the table. */
  unwritten = new Set<number>(),
) {
  const entries: EntryRecord[] = Array.from({ length: count }, (_, i) => ({
    account: walletAccount('alice'),
    seq: i + 1,
    transferId: `t${i + 1}`,
    transferKind: i === 0 ? 'deposit' : 'transfer',
    direction: i === 0 ? 'in' : 'out',
    amountMinor: i === 0 ? 10_000 : 1,
    balanceAfter: 10_000 - i,
    counterpartyAccount: i === 0 ? ISSUANCE_ACCOUNT : walletAccount('bob'),
    counterpartySeq: i + 1,
    currency: 'USD',
    createdAt: `2026-11-24T10:00:${String(i).padStart(2, '0')}.000Z`,
  }));
  for (const id of inTransit.payments ?? []) {
    const entry = entries.find((e) => e.transferId === id);
    if (entry) Object.assign(entry, { counterpartyAccount: CLEARING_ACCOUNT, counterpartyAddress: 'shop' });
  }
  const queries: number[] = [];
  const creditReads: string[][] = [];
  const history = {
    async page(address: string, limit: number, atOrBelow?: number) {
      queries.push(limit);
      const page = entries
        .filter(
          (e) => e.account === walletAccount(address) && (atOrBelow === undefined || e.seq <= atOrBelow),
        )
        .filter((e) => !lagging.has(e.seq) && !unwritten.has(e.seq))
        .sort((a, b) => b.seq - a.seq)
        .slice(0, limit);
      return {
        entries: page,
        pending: atOrBelow === undefined ? (inTransit.credits ?? []).slice(0, limit) : [],
      };
    },
    // The table's own copy, which has every entry written, lagging or not; and, asked for the
    // transfer it should be of, a posted batch's credit, from its credit and batch items.
    async entryAt(address: string, seq: number, transferId?: string) {
      if (unwritten.has(seq) && transferId === undefined) return undefined;
      return entries.find((e) => e.account === walletAccount(address) && e.seq === seq);
    },
    async creditsInTransit(ids: readonly string[]) {
      if (ids.length > 0) creditReads.push([...ids]);
      return new Set(ids.filter((id) => inTransit.payments?.includes(id)));
    },
  };
  return { list: makeListTransfers({ history }), queries, creditReads };
}

describe('list transfers (use case)', () => {
  it('pages newest first, one query a page, and says there is more exactly when there is', async () => {
    const { list, queries } = historyOf(5);
    const first = await list({ sub: 'alice', limit: 2 });
    expect(first.items.map((i) => i.transferId)).toEqual(['t5', 't4']);
    const second = await list({ sub: 'alice', limit: 2, cursor: first.nextCursor });
    expect(second.items.map((i) => i.transferId)).toEqual(['t3', 't2']);
    const last = await list({ sub: 'alice', limit: 2, cursor: second.nextCursor });
    expect(last.items.map((i) => i.transferId)).toEqual(['t1']);
    expect(last.nextCursor).toBeUndefined();
    expect(queries).toHaveLength(3);
    expect(last.items[0]).toMatchObject({ kind: 'deposit', direction: 'in', counterparty: undefined });
    expect(second.items[0]).toMatchObject({
      kind: 'transfer',
      counterparty: 'bob',
      balanceAfterMinor: 9_998n,
    });
  });

  it('ends a page before an entry the index does not have yet, so that a later page lists it', async () => {
    const lagging = new Set([11, 6]);
    const { list } = historyOf(12, {}, lagging);
    const first = await list({ sub: 'alice', limit: 5 });
    expect(first.items.map((i) => i.transferId)).toEqual(['t12']);
    lagging.delete(11);
    const second = await list({ sub: 'alice', limit: 5, cursor: first.nextCursor });
    expect(second.items.map((i) => i.transferId)).toEqual(['t11', 't10', 't9', 't8', 't7']);
    // Missing right below the cursor: the table's copy, read for it, is the page.
    const late = await list({ sub: 'alice', limit: 5, cursor: second.nextCursor });
    expect(late.items.map((i) => i.transferId)).toEqual(['t6']);
    lagging.delete(6);
    const third = await list({ sub: 'alice', limit: 5, cursor: late.nextCursor });
    expect(third.items.map((i) => i.transferId)).toEqual(['t5', 't4', 't3', 't2', 't1']);
  });

  it("goes on below a cursor's entry that an index replica does not have yet, rather than refuse the cursor", async () => {
    const lagging = new Set<number>();
    const { list } = historyOf(6, {}, lagging);
    const first = await list({ sub: 'alice', limit: 2 });
    // The next read meets a replica without the entry the first page ended at (t5), nor t4 yet.
    lagging.add(5).add(4);
    const late = await list({ sub: 'alice', limit: 2, cursor: first.nextCursor });
    expect(late.items.map((i) => i.transferId)).toEqual(['t4']);
    lagging.delete(4);
    const second = await list({ sub: 'alice', limit: 2, cursor: first.nextCursor });
    expect(second.items.map((i) => i.transferId)).toEqual(['t4', 't3']);
    expect(second.nextCursor).toBe(encodeCursor('alice', { seq: 3, transferId: 't3' }));
  });

  it('lists the next entry from the table, not ends the walk nor hands its cursor back, when a replica has nothing below it yet', async () => {
    const lagging = new Set<number>();
    const { list } = historyOf(6, {}, lagging);
    const first = await list({ sub: 'alice', limit: 2 });
    const next = encodeCursor('alice', { seq: 4, transferId: 't4' });
    // A replica with none of the entries below the page's last (t5), with and without t5 itself.
    lagging.add(4).add(3).add(2).add(1);
    for (const missing of [false, true]) {
      if (missing) lagging.add(5);
      const page = await list({ sub: 'alice', limit: 2, cursor: first.nextCursor });
      expect(page.items.map((i) => i.transferId)).toEqual(['t4']);
      expect(page.nextCursor).toBe(next);
    }
    lagging.clear();
    const rest = await list({ sub: 'alice', limit: 4, cursor: first.nextCursor });
    expect(rest.items.map((i) => i.transferId)).toEqual(['t4', 't3', 't2', 't1']);
    expect(rest.nextCursor).toBeUndefined();
  });

  it("hands its cursor back, listing nothing, while a just-posted batch's numbers are in neither the index nor the table", async () => {
    // t6..t8 are a batch's credits, posted a moment ago: a replica without the batch, no entries yet.
    const unwritten = new Set([6, 7, 8]);
    const { list } = historyOf(10, {}, new Set(), unwritten);
    const first = await list({ sub: 'alice', limit: 2 });
    expect(first.items.map((i) => i.transferId)).toEqual(['t10', 't9']);
    // Going on below them would leave t6..t8 out of this walk for good.
    const stalled = await list({ sub: 'alice', limit: 2, cursor: first.nextCursor });
    expect(stalled).toEqual({ items: [], nextCursor: first.nextCursor });
    unwritten.clear();
    const second = await list({ sub: 'alice', limit: 3, cursor: stalled.nextCursor });
    expect(second.items.map((i) => i.transferId)).toEqual(['t8', 't7', 't6']);
  });

  it("takes back its own cursor ending on a posted batch's credit that the next replica does not show yet", async () => {
    const unwritten = new Set<number>();
    const { list } = historyOf(10, {}, new Set(), unwritten);
    // The first page comes from a replica with the batch (t6..t8, posted, not completed) in it.
    const first = await list({ sub: 'alice', limit: 3 });
    expect(first.items.map((i) => i.transferId)).toEqual(['t10', 't9', 't8']);
    // The next from one without it: no entry items for t6..t8 in the table either, until completion.
    unwritten.add(6).add(7).add(8);
    const stalled = await list({ sub: 'alice', limit: 3, cursor: first.nextCursor });
    expect(stalled).toEqual({ items: [], nextCursor: first.nextCursor });
    // Another transfer's id at that number is still no cursor of this walk.
    await expect(
      list({ sub: 'alice', limit: 3, cursor: encodeCursor('alice', { seq: 8, transferId: 't7' }) }),
    ).rejects.toThrow(InvalidParameterError);
    unwritten.clear();
    const second = await list({ sub: 'alice', limit: 3, cursor: stalled.nextCursor });
    expect(second.items.map((i) => i.transferId)).toEqual(['t7', 't6', 't5']);
  });

  it('refuses a cursor of another caller or one naming another transfer at its position', async () => {
    const { list } = historyOf(5);
    await expect(
      list({ sub: 'alice', limit: 2, cursor: encodeCursor('bob', { seq: 4, transferId: 't4' }) }),
    ).rejects.toThrow(InvalidParameterError);
    await expect(
      list({ sub: 'alice', limit: 2, cursor: encodeCursor('alice', { seq: 4, transferId: 't3' }) }),
    ).rejects.toThrow(InvalidParameterError);
    const fine = await list({
      sub: 'alice',
      limit: 2,
      cursor: encodeCursor('alice', { seq: 4, transferId: 't4' }),
    });
    expect(fine.items.map((i) => i.transferId)).toEqual(['t3', 't2']);
  });

  it('refuses a cursor at a position no page gave, which the index lacks because it never was', async () => {
    const { list } = historyOf(5);
    for (const forged of [
      { seq: 6, transferId: 't5' },
      { seq: 6, transferId: 't6' },
      { seq: 99, transferId: 't99' },
    ]) {
      await expect(list({ sub: 'alice', limit: 2, cursor: encodeCursor('alice', forged) })).rejects.toThrow(
        InvalidParameterError,
      );
    }
  });
});

describe('list transfers of a wallet paying or paid through the clearing account', () => {
  const credit: PendingCredit = {
    transferId: 'c1',
    fromAddress: 'carol',
    amountMinor: 7,
    currency: 'USD',
    createdAt: '2026-11-24T10:01:00.000Z',
  };

  it('shows a payment whose credit is in transit as pending, to its recipient, reading credits only for such payments', async () => {
    const { list, creditReads } = historyOf(4, { payments: ['t3'] });
    const page = await list({ sub: 'alice', limit: 10 });
    expect(page.items.map((i) => [i.transferId, i.status])).toEqual([
      ['t4', 'completed'],
      ['t3', 'pending'],
      ['t2', 'completed'],
      ['t1', 'completed'],
    ]);
    expect(page.items[1]?.counterparty).toBe('shop');
    expect(creditReads).toEqual([['t3']]);
    await list({ sub: 'alice', limit: 1 });
    expect(creditReads).toHaveLength(1);
  });

  it('lists the credits in transit to the wallet on the first page only', async () => {
    const { list } = historyOf(3, { credits: [credit] });
    const first = await list({ sub: 'alice', limit: 1 });
    expect(first.pending).toEqual([credit]);
    const next = await list({ sub: 'alice', limit: 1, cursor: first.nextCursor });
    expect(next.pending).toBeUndefined();
  });

  it('lists a credit posted while the page was read once, as the entry the page shows', async () => {
    // The credits in transit were read just before the posting, the entries just after it.
    const { list } = historyOf(3, { credits: [{ ...credit, transferId: 't3' }, credit] });
    const first = await list({ sub: 'alice', limit: 2 });
    expect(first.items.map((item) => item.transferId)).toEqual(['t3', 't2']);
    expect(first.pending).toEqual([credit]);
    const none = historyOf(3, { credits: [{ ...credit, transferId: 't3' }] });
    expect((await none.list({ sub: 'alice', limit: 2 })).pending).toBeUndefined();
  });
});

describe('get transfer (use case)', () => {
  const movement: MovementRecord = {
    transferId: 't1',
    transferKind: 'transfer',
    fromAddress: 'alice',
    toAddress: 'bob',
    amountMinor: 5,
    currency: 'USD',
    createdAt: '2026-11-24T10:00:00.000Z',
    status: 'completed',
  };
  const get = makeGetTransfer({ history: { movement: async (id) => (id === 't1' ? movement : undefined) } });

  it('shows a movement to its two parties', async () => {
    expect(await get({ sub: 'alice', transferId: 't1' })).toBe(movement);
    expect(await get({ sub: 'bob', transferId: 't1' })).toBe(movement);
  });

  it('tells anyone else, as for an unknown id, that there is no such transfer', async () => {
    await expect(get({ sub: 'eve', transferId: 't1' })).rejects.toThrow(NotFoundError);
    await expect(get({ sub: 'alice', transferId: 't2' })).rejects.toThrow(NotFoundError);
  });
});
