import { describe, expect, it, vi } from 'vitest';
import { TemporarilyUnavailableError } from '#shared/errors.ts';
import {
  DIRECT_CLAIM_HOLDS_MS,
  HOT_FOR_MS,
  makeHotWalletRouter,
  type RecipientView,
} from '#shared/wallet/hot-wallet/router.ts';
import { InMemoryWallets } from './fakes/in-memory-wallets.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const open = { exists: true, balance: 0n, seq: 3 };
/** The recipient as a payment reads it: not hot, the claim before `settled` settled on its wallet. */
const read = (overrides: Partial<RecipientView> = {}): RecipientView => ({
  recipient: open,
  recipientHotUntil: 0,
  ...overrides,
});

function router(now = NOW) {
  const stores = new InMemoryWallets();
  const clock = { now: () => now };
  return { stores, route: makeHotWalletRouter({ claims: stores, marker: stores, clock }) };
}

describe('the hot-wallet router', () => {
  it('credits directly the first payment to a quiet wallet, and claims its direct credit for it', async () => {
    const { stores, route } = router();
    const routing = route.begin('shop', 'p1', NOW);
    expect(await routing.routeOn(read())).toBe('direct');
    expect(stores.directClaims.get('shop')).toEqual({ claimId: 'p1', claimedAt: NOW });
    expect(stores.hotUntil.has('shop')).toBe(false);
  });

  it('sends through the clearing account, and marks the wallet hot, a payment whose claim came after an unsettled one', async () => {
    const { stores, route } = router();
    stores.directClaims.set('shop', { claimId: 'in-flight', claimedAt: NOW - 10 });
    const routing = route.begin('shop', 'p2', NOW);
    expect(await routing.routeOn(read({ recipientDirectClaim: 'older' }))).toBe('clearing');
    expect(stores.hotUntil.get('shop')).toBe(NOW + HOT_FOR_MS);
  });

  it('credits directly after a claim that was settled on the wallet, or has gone stale', async () => {
    const settled = router();
    settled.stores.directClaims.set('shop', { claimId: 'done', claimedAt: NOW - 10 });
    expect(await settled.route.begin('shop', 'p', NOW).routeOn(read({ recipientDirectClaim: 'done' }))).toBe(
      'direct',
    );
    const stale = router();
    stale.stores.directClaims.set('shop', { claimId: 'dead', claimedAt: NOW - DIRECT_CLAIM_HOLDS_MS - 1 });
    expect(await stale.route.begin('shop', 'p', NOW).routeOn(read())).toBe('direct');
  });

  it('answers busy, putting nothing in transit, when the mark a clearing credit needs cannot be written', async () => {
    const { stores, route } = router();
    stores.directClaims.set('shop', { claimId: 'in-flight', claimedAt: NOW });
    vi.spyOn(stores, 'markHot').mockResolvedValue(0);
    await expect(route.begin('shop', 'p', NOW).routeOn(read())).rejects.toThrow(TemporarilyUnavailableError);
  });

  it('remembers a wallet it saw hot: the next payments neither claim nor read it while the mark holds, and do once it lapses', async () => {
    let now = NOW;
    const stores = new InMemoryWallets();
    const route = makeHotWalletRouter({ claims: stores, marker: stores, clock: { now: () => now } });
    const claims = vi.spyOn(stores, 'claimDirectCredit');
    const first = route.begin('shop', 'p1', now);
    expect(first.known).toBeUndefined();
    expect(await first.routeOn(read({ recipientHotUntil: now + 5_000 }))).toBe('clearing');
    const second = route.begin('shop', 'p2', now);
    expect(second.known).toEqual({ recipient: open, recipientHotUntil: now + 5_000 });
    expect(claims).toHaveBeenCalledTimes(1);
    now += 5_000;
    expect(route.begin('shop', 'p3', now).known).toBeUndefined();
    expect(claims).toHaveBeenCalledTimes(2);
  });

  it('after a contended commit, routes the same payment through the clearing account and marks the wallet once', async () => {
    const { stores, route } = router();
    const marks = vi.spyOn(stores, 'markHot');
    const routing = route.begin('shop', 'p', NOW);
    expect(await routing.routeOn(read())).toBe('direct');
    routing.contended(read());
    routing.contended(read());
    expect(await routing.routeOn(read())).toBe('clearing');
    expect(marks).toHaveBeenCalledTimes(1);
  });

  it('withdraws the claim of a payment that wrote nothing, restoring the one before, and keeps that of one that committed', async () => {
    const refused = router();
    refused.stores.directClaims.set('shop', { claimId: 'before', claimedAt: NOW - 1 });
    const routing = refused.route.begin('shop', 'p', NOW);
    await routing.settle(false, Date.now() + 1_000);
    expect(refused.stores.directClaims.get('shop')).toEqual({ claimId: 'before', claimedAt: NOW - 1 });

    const paid = router();
    const committed = paid.route.begin('shop', 'p', NOW);
    await committed.settle(true, Date.now() + 1_000);
    expect(paid.stores.directClaims.get('shop')).toEqual({ claimId: 'p', claimedAt: NOW });
  });

  it('leaves the claim to go stale when the deadline has passed: a write then could outlast the request', async () => {
    const { stores, route } = router();
    const releases = vi.spyOn(stores, 'releaseDirectCredit');
    await route.begin('shop', 'p', NOW).settle(false, Date.now() - 1);
    expect(releases).not.toHaveBeenCalled();
  });
});
