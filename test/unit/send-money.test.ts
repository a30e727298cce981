import { describe, expect, it, vi } from 'vitest';
import {
  IdempotencyKeyReuseError,
  InsufficientFundsError,
  RecipientLimitError,
  TemporarilyUnavailableError,
  UnknownRecipientError,
} from '#shared/errors.ts';
import { ANSWER_MARGIN_MS } from '#shared/request-deadline.ts';
import { DIRECT_CLAIM_HOLDS_MS, HOT_FOR_MS, makeHotWalletRouter } from '#shared/wallet/hot-wallet/router.ts';
import { MAX_BALANCE_MINOR } from '#shared/wallet/model/money.ts';
import type { WalletSettings } from '#shared/wallet/model/settings.ts';
import { makeSendMoney, type SendMoneyCommand } from '#shared/wallet/send/send-money.ts';
import { InMemoryWallets } from './fakes/in-memory-wallets.ts';

const settings: WalletSettings = {
  currency: { code: 'USD', decimals: 2 },
  maxTransferMinor: 1_000_000_00,
  idempotencyTtlSeconds: 86_400,
};
const NOW = Date.parse('2026-11-24T10:00:00.000Z');

function bank(balances: Record<string, number>) {
  const wallets = new InMemoryWallets();
  for (const [address, minor] of Object.entries(balances)) {
    wallets.wallets.set(address, { balanceMinor: BigInt(minor), seq: 0 });
  }
  let n = 0;
  const clock = { now: () => NOW };
  const sendMoney = makeSendMoney({
    transfers: wallets,
    router: makeHotWalletRouter({ claims: wallets, marker: wallets, clock }),
    clock,
    ids: { next: () => `transfer-${++n}` },
    settings,
  });
  // A request with the function's 10 s ahead of it, unless it says otherwise.
  const send = (command: Omit<SendMoneyCommand, 'answerBy'> & { answerBy?: number }) =>
    sendMoney({ answerBy: Date.now() + 10_000, ...command });
  const balance = (address: string) => wallets.wallets.get(address)?.balanceMinor;
  return { wallets, send, balance };
}

describe('send money (use case)', () => {
  it('moves the amount and answers the transfer it made, stamped by the clock and named by the id source', async () => {
    const { send, balance } = bank({ alice: 1_000, bob: 0 });
    const result = await send({ sub: 'alice', toAddress: 'bob', amountMinor: 250 });
    expect(result).toEqual({
      replayed: false,
      status: 'completed',
      transfer: {
        transferId: 'transfer-1',
        fromAddress: 'alice',
        toAddress: 'bob',
        amountMinor: 250,
        currency: 'USD',
        createdAt: '2026-11-24T10:00:00.000Z',
      },
    });
    expect([balance('alice'), balance('bob')]).toEqual([750n, 250n]);
  });

  it('refuses an amount the balance does not cover, moving nothing', async () => {
    const { send, balance } = bank({ alice: 100, bob: 0 });
    await expect(send({ sub: 'alice', toAddress: 'bob', amountMinor: 101 })).rejects.toThrow(
      InsufficientFundsError,
    );
    expect([balance('alice'), balance('bob')]).toEqual([100n, 0n]);
  });

  it('opens the wallet of a sender who had none when refusing it', async () => {
    const { send, balance } = bank({ bob: 0 });
    await expect(send({ sub: 'carol', toAddress: 'bob', amountMinor: 1 })).rejects.toThrow(
      InsufficientFundsError,
    );
    expect(balance('carol')).toBe(0n);
  });

  it('refuses an address with no open wallet', async () => {
    const { send, balance } = bank({ alice: 100 });
    await expect(send({ sub: 'alice', toAddress: 'nobody', amountMinor: 1 })).rejects.toThrow(
      UnknownRecipientError,
    );
    expect(balance('alice')).toBe(100n);
  });

  it('refuses a credit past the most a wallet holds', async () => {
    const { send } = bank({ alice: 100, rich: MAX_BALANCE_MINOR });
    await expect(send({ sub: 'alice', toAddress: 'rich', amountMinor: 1 })).rejects.toThrow(
      RecipientLimitError,
    );
  });

  it('replays the first transfer for a repeated key, moving money once', async () => {
    const { send, balance } = bank({ alice: 1_000, bob: 0 });
    const command = { sub: 'alice', toAddress: 'bob', amountMinor: 100, idempotencyKey: 'k1' };
    const first = await send(command);
    const again = await send(command);
    expect(again).toEqual({ replayed: true, status: 'completed', transfer: first.transfer });
    expect(balance('alice')).toBe(900n);
  });

  it('refuses a key reused for another amount or recipient', async () => {
    const { send } = bank({ alice: 1_000, bob: 0, carol: 0 });
    await send({ sub: 'alice', toAddress: 'bob', amountMinor: 100, idempotencyKey: 'k1' });
    await expect(
      send({ sub: 'alice', toAddress: 'bob', amountMinor: 101, idempotencyKey: 'k1' }),
    ).rejects.toThrow(IdempotencyKeyReuseError);
    await expect(
      send({ sub: 'alice', toAddress: 'carol', amountMinor: 100, idempotencyKey: 'k1' }),
    ).rejects.toThrow(IdempotencyKeyReuseError);
  });

  it("keeps one caller's key apart from another's", async () => {
    const { send, balance } = bank({ alice: 1_000, bob: 1_000, carol: 0 });
    await send({ sub: 'alice', toAddress: 'carol', amountMinor: 100, idempotencyKey: 'same' });
    const bobs = await send({ sub: 'bob', toAddress: 'carol', amountMinor: 100, idempotencyKey: 'same' });
    expect(bobs.replayed).toBe(false);
    expect(balance('carol')).toBe(200n);
  });

  it('credits a hot wallet through the clearing account: the payer pays now, the credit is pending', async () => {
    const { wallets, send, balance } = bank({ alice: 1_000, shop: 0 });
    await wallets.markHot('shop', NOW + 1);
    const result = await send({ sub: 'alice', toAddress: 'shop', amountMinor: 250 });
    expect(result.status).toBe('pending');
    expect(result.transfer.via).toBe('clearing');
    expect([balance('alice'), balance('shop')]).toEqual([750n, 0n]);
    expect(wallets.credits.get(result.transfer.transferId)).toEqual({
      transfer: result.transfer,
      posted: false,
    });
    expect((await wallets.readWallet('shop'))?.pendingMinor).toBe(250n);
  });

  it('credits a wallet whose hot mark has lapsed directly again', async () => {
    const { wallets, send, balance } = bank({ alice: 1_000, shop: 0 });
    await wallets.markHot('shop', NOW);
    expect((await send({ sub: 'alice', toAddress: 'shop', amountMinor: 250 })).status).toBe('completed');
    expect(balance('shop')).toBe(250n);
  });

  it('marks a contended recipient hot and pays through the clearing account at once, trying its wallet once', async () => {
    const { wallets, send } = bank({ alice: 1_000, shop: 0 });
    wallets.contend = 1;
    const result = await send({ sub: 'alice', toAddress: 'shop', amountMinor: 250 });
    expect(result.status).toBe('pending');
    expect(wallets.commits.map((plan) => plan.route.kind)).toEqual(['direct', 'clearing']);
    // The payer was not refused: its read still holds, and the second write needs no second read.
    expect(wallets.reads).toBe(1);
    expect(wallets.hotUntil.get('shop')).toBeGreaterThan(NOW);
  });

  it('lets only the first of payments arriving at a wallet together write it: the rest go through the clearing account without naming it', async () => {
    const payers = Array.from({ length: 20 }, (_, i) => `payer-${i}`);
    const { wallets, send, balance } = bank({ shop: 0, ...Object.fromEntries(payers.map((p) => [p, 100])) });
    const results = await Promise.all(
      payers.map((sub) => send({ sub, toAddress: 'shop', amountMinor: 100 })),
    );
    expect(wallets.commits.filter((plan) => plan.route.kind === 'direct')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'pending')).toHaveLength(19);
    expect(balance('shop')).toBe(100n);
    expect((await wallets.readWallet('shop'))?.pendingMinor).toBe(1_900n);
    expect(wallets.hotUntil.get('shop')).toBeGreaterThan(NOW);
  });

  it('credits a wallet directly when the claim before was settled on it, or is stale', async () => {
    const { wallets, send, balance } = bank({ alice: 1_000, bob: 0 });
    await send({ sub: 'alice', toAddress: 'bob', amountMinor: 1 });
    expect((await send({ sub: 'alice', toAddress: 'bob', amountMinor: 1 })).status).toBe('completed');
    // A claim whose payment never credited the wallet (refused, say) holds it only for a while.
    wallets.directClaims.set('bob', { claimId: 'refused', claimedAt: NOW - DIRECT_CLAIM_HOLDS_MS - 1 });
    expect((await send({ sub: 'alice', toAddress: 'bob', amountMinor: 1 })).status).toBe('completed');
    wallets.directClaims.set('bob', { claimId: 'in-flight', claimedAt: NOW - 1 });
    expect((await send({ sub: 'alice', toAddress: 'bob', amountMinor: 1 })).status).toBe('pending');
    expect(balance('bob')).toBe(3n);
  });

  it('withdraws the claim of a payment that wrote nothing, so that the next one credits the wallet directly', async () => {
    const { wallets, send, balance } = bank({ alice: 100, bob: 0 });
    await expect(send({ sub: 'alice', toAddress: 'bob', amountMinor: 1_000 })).rejects.toThrow(
      InsufficientFundsError,
    );
    expect((await send({ sub: 'alice', toAddress: 'bob', amountMinor: 10 })).status).toBe('completed');
    expect(balance('bob')).toBe(10n);
    // A claim made after the refused one's is not withdrawn by it.
    const release = wallets.releaseDirectCredit.bind(wallets);
    wallets.releaseDirectCredit = async (address, claimId, before) => {
      wallets.directClaims.set(address, { claimId: 'later', claimedAt: NOW });
      await release(address, claimId, before);
    };
    await expect(send({ sub: 'alice', toAddress: 'bob', amountMinor: 1_000 })).rejects.toThrow(
      InsufficientFundsError,
    );
    expect(wallets.directClaims.get('bob')?.claimId).toBe('later');
  });

  it('pays through the clearing account, marking the wallet, when its claim could not be written', async () => {
    const { wallets, send } = bank({ alice: 1_000, bob: 0 });
    wallets.claimDirectCredit = async () => undefined;
    expect((await send({ sub: 'alice', toAddress: 'bob', amountMinor: 1 })).status).toBe('pending');
    expect(wallets.commits.map((plan) => plan.route.kind)).toEqual(['clearing']);
    expect(wallets.hotUntil.get('bob')).toBeGreaterThan(NOW);
  });

  it('neither claims nor reads a recipient it has seen hot while its mark holds, and reads it again once the mark lapses', async () => {
    const { wallets, send } = bank({ alice: 1_000, shop: 0 });
    await wallets.markHot('shop', NOW + 1);
    const claims = vi.spyOn(wallets, 'claimDirectCredit');
    await send({ sub: 'alice', toAddress: 'shop', amountMinor: 1 });
    await send({ sub: 'alice', toAddress: 'shop', amountMinor: 1 });
    expect(claims).toHaveBeenCalledTimes(1);
    expect([wallets.reads, wallets.recipientReads]).toEqual([2, 1]);
    expect(wallets.credits.size).toBe(2);

    let now = NOW;
    const clock = { now: () => now };
    const later = makeSendMoney({
      transfers: wallets,
      router: makeHotWalletRouter({ claims: wallets, marker: wallets, clock }),
      clock,
      ids: { next: () => `later-${now}` },
      settings,
    });
    const pay = () =>
      later({ sub: 'alice', toAddress: 'shop', amountMinor: 1, answerBy: Date.now() + 10_000 });
    // A wallet a container marked itself is remembered too: the mark lapsed in the ledger, and the
    // claim before this payment's is not settled, so it goes through the clearing account and marks.
    wallets.hotUntil.delete('shop');
    expect((await pay()).status).toBe('pending');
    expect(wallets.hotUntil.get('shop')).toBe(NOW + HOT_FOR_MS);
    const readsBefore = wallets.recipientReads;
    now += 1;
    expect((await pay()).status).toBe('pending');
    expect(wallets.recipientReads).toBe(readsBefore);
    // Past the mark the recipient is read again, and credited directly when no longer hot.
    now += HOT_FOR_MS;
    wallets.hotUntil.delete('shop');
    expect((await pay()).status).toBe('completed');
    expect(wallets.recipientReads).toBe(readsBefore + 1);
  });

  it('puts no credit in transit before the mark is written, and remembers a wallet it marked only then', async () => {
    const { wallets, send, balance } = bank({ alice: 1_000, shop: 0 });
    wallets.contend = 1;
    const markHot = vi.spyOn(wallets, 'markHot').mockResolvedValueOnce(0);
    // The mark could not be written: no credit may wait where the balance read does not look.
    await expect(send({ sub: 'alice', toAddress: 'shop', amountMinor: 1 })).rejects.toThrow(
      TemporarilyUnavailableError,
    );
    expect([balance('alice'), wallets.credits.size]).toEqual([1_000n, 0]);
    // Not remembered: the next payment reads the wallet, and marks it.
    const reads = wallets.recipientReads;
    wallets.contend = 1;
    expect((await send({ sub: 'alice', toAddress: 'shop', amountMinor: 1 })).status).toBe('pending');
    expect(wallets.recipientReads).toBe(reads + 1);
    expect(markHot).toHaveBeenCalledTimes(2);
    expect(wallets.hotUntil.get('shop')).toBeGreaterThan(NOW);
    await send({ sub: 'alice', toAddress: 'shop', amountMinor: 1 });
    expect(wallets.recipientReads).toBe(reads + 1);
  });

  it('reads the payer again and retries when its account moved on, until it commits', async () => {
    const { wallets, send, balance } = bank({ alice: 1_000, bob: 0 });
    wallets.movePayer = 5;
    expect((await send({ sub: 'alice', toAddress: 'bob', amountMinor: 1 })).status).toBe('completed');
    expect(wallets.commits).toHaveLength(6);
    expect(balance('alice')).toBe(999n);
  });

  it('keeps trying a payer busy with its own payments while a commit started still ends in time to answer', async () => {
    vi.useFakeTimers();
    try {
      const { wallets, send, balance } = bank({ alice: 1_000, bob: 0 });
      wallets.movePayer = Number.POSITIVE_INFINITY;
      // The send route's 20 s: its payer stays busy for 5 s (a loaded DynamoDB Local, 16 payments
      // from one wallet at once), longer than any fixed count of tries or seconds would wait.
      const settled = send({ sub: 'alice', toAddress: 'bob', amountMinor: 1, answerBy: Date.now() + 20_000 });
      settled.catch(() => undefined);
      await vi.advanceTimersByTimeAsync(5_000);
      wallets.movePayer = 0;
      await vi.advanceTimersByTimeAsync(200);
      expect((await settled).status).toBe('completed');
      expect(balance('alice')).toBe(999n);
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers busy, writing nothing, once a commit started now could end after the answer is due', async () => {
    const { wallets, send, balance } = bank({ alice: 1_000, bob: 0 });
    wallets.movePayer = Number.POSITIVE_INFINITY;
    const answerBy = Date.now() + wallets.longestCommitMs + ANSWER_MARGIN_MS + 100;
    await expect(send({ sub: 'alice', toAddress: 'bob', amountMinor: 1, answerBy })).rejects.toThrow(
      TemporarilyUnavailableError,
    );
    const commits = wallets.commits.length;
    expect(commits).toBeGreaterThan(1);
    expect(balance('alice')).toBe(1_000n);
  });

  it('leaves its claim to go stale, rather than withdraw it, once past the last moment to start a commit', async () => {
    const { wallets, send } = bank({ alice: 1_000, bob: 0 });
    const releases = vi.spyOn(wallets, 'releaseDirectCredit');
    // A commit that starts in time and comes back refused after the deadline.
    const commit = wallets.commit.bind(wallets);
    wallets.commit = async (plan) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      wallets.movePayer = 1;
      return commit(plan);
    };
    const answerBy = Date.now() + wallets.longestCommitMs + ANSWER_MARGIN_MS + 100;
    await expect(send({ sub: 'alice', toAddress: 'bob', amountMinor: 1, answerBy })).rejects.toThrow(
      TemporarilyUnavailableError,
    );
    expect(wallets.commits).toHaveLength(1);
    expect(releases).not.toHaveBeenCalled();
    // In time, a payment that wrote nothing withdraws it.
    await expect(send({ sub: 'alice', toAddress: 'bob', amountMinor: 5_000 })).rejects.toThrow(
      InsufficientFundsError,
    );
    expect(releases).toHaveBeenCalledTimes(1);
  });

  it('answers busy rather than read its status when a key turns out to be claimed past the last moment to start a commit', async () => {
    const { wallets, send } = bank({ alice: 1_000, shop: 0 });
    await wallets.markHot('shop', NOW + 1);
    const command = { sub: 'alice', toAddress: 'shop', amountMinor: 100, idempotencyKey: 'k-late' };
    expect((await send(command)).status).toBe('pending');
    // The same key again, in a request whose read misses the claim and whose commit, started in
    // time, finds it after the deadline.
    const read = wallets.read.bind(wallets);
    wallets.read = async (...args) => {
      const { claimed: _, ...state } = await read(...args);
      return state;
    };
    const commit = wallets.commit.bind(wallets);
    wallets.commit = async (plan) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return commit(plan);
    };
    const statuses = vi.spyOn(wallets, 'creditPosted');
    const answerBy = Date.now() + wallets.longestCommitMs + ANSWER_MARGIN_MS + 100;
    await expect(send({ ...command, answerBy })).rejects.toThrow(TemporarilyUnavailableError);
    expect(statuses).not.toHaveBeenCalled();
  });

  it('replays a payment to a hot wallet with the status its credit has now', async () => {
    const { wallets, send } = bank({ alice: 1_000, shop: 0 });
    await wallets.markHot('shop', NOW + 1);
    const command = { sub: 'alice', toAddress: 'shop', amountMinor: 100, idempotencyKey: 'k-hot' };
    const first = await send(command);
    expect((await send(command)).status).toBe('pending');
    const credit = wallets.credits.get(first.transfer.transferId);
    if (credit) credit.posted = true;
    expect(await send(command)).toEqual({ replayed: true, status: 'completed', transfer: first.transfer });
  });
});
