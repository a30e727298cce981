import { describe, expect, it, vi } from 'vitest';
import type { AccountState } from '#shared/wallet/ledger-commit.ts';
import {
  type CreditInTransit,
  type CreditLedger,
  type LeaseHolder,
  makePostCredits,
  PostingCutShort,
  type PostingPlan,
  type PostingResult,
} from '#shared/wallet/post-credits.ts';

/**
 * One wallet's side of the ledger in memory, refusing a posting as the transaction's conditions
 * do: a wallet that is not as the plan says, or a credit posted already.
 */
class OneWallet implements CreditLedger {
  wallet: AccountState = { exists: true, balance: 0n, seq: 0 };
  readonly credits = new Map<string, CreditInTransit>();
  readonly posts: PostingPlan[] = [];
  /** Postings the conditions refused. */
  refused = 0;
  reads = 0;

  async read(_address: string, transferIds: readonly string[]) {
    this.reads++;
    const credits = transferIds.flatMap((id) => {
      const credit = this.credits.get(id);
      return credit ? [credit] : [];
    });
    return { wallet: this.wallet, credits };
  }

  async post(plan: PostingPlan): Promise<PostingResult> {
    this.onPost();
    this.posts.push(plan);
    if (plan.wallet.balance !== this.wallet.balance || plan.wallet.seq !== this.wallet.seq) {
      this.refused++;
      return { kind: 'wallet-moved' };
    }
    if (plan.credits.some((c) => this.credits.get(c.transferId)?.postedSeq !== undefined)) {
      this.refused++;
      return { kind: 'credit-taken' };
    }
    let { balance, seq } = this.wallet;
    for (const credit of plan.credits) {
      balance += BigInt(credit.amountMinor);
      this.credits.set(credit.transferId, { ...credit, postedSeq: ++seq });
    }
    this.wallet = { exists: true, balance, seq };
    return { kind: 'posted' };
  }

  async markHot(): Promise<number> {
    return 0;
  }

  /** The posting lease, as its item holds it (`holder`: the call). */
  lease: { holder: string; poster: string; until: number; waiting: boolean } | undefined;
  /** What the index of credits in transit shows: all of them, or none yet (it lags). */
  indexShows: 'all' | 'none' = 'all';
  /** Called at each posting, before it is applied: where a test lets another poller in. */
  onPost: () => void = () => undefined;
  /** Called when a release is refused because others wait: where a test has them say it again. */
  onOthersWaiting: () => void = () => undefined;
  oldestCreditsReads = 0;

  async takeLease(_address: string, holder: LeaseHolder, now: number, until: number) {
    const old = this.lease;
    if (old && old.until >= now && old.holder !== holder.call)
      return { taken: false, othersPosted: true, othersWait: old.waiting };
    // A put: the whole item is written again, `waiting` with it.
    this.lease = { holder: holder.call, poster: holder.poster, until, waiting: false };
    return { taken: true, othersPosted: old?.poster !== holder.poster, othersWait: false };
  }

  async renewLease(_address: string, holder: LeaseHolder, until: number) {
    if (this.lease?.holder === holder.call) this.lease.until = until;
  }

  async waitFor(_address: string, now: number) {
    if (!this.lease || this.lease.until < now) return false;
    this.lease.waiting = true;
    return true;
  }

  async releaseLease(_address: string, holder: LeaseHolder, force: boolean) {
    if (this.lease?.holder !== holder.call) return 'released' as const;
    const othersWaiting = this.lease.waiting && !force;
    this.lease = { ...this.lease, waiting: false, ...(othersWaiting ? {} : { until: 0 }) };
    if (othersWaiting) this.onOthersWaiting();
    return othersWaiting ? ('others-waiting' as const) : ('released' as const);
  }

  async oldestCredits() {
    this.oldestCreditsReads++;
    return this.indexShows === 'all'
      ? [...this.credits.values()].filter((c) => c.postedSeq === undefined)
      : [];
  }

  /** Credits paid into the wallet, as the stream announces them. */
  pay(...amounts: number[]): CreditInTransit[] {
    return amounts.map((amountMinor) => {
      const credit = {
        transferId: `t${this.credits.size + 1}`,
        fromAccount: 'W#payer',
        fromSeq: this.credits.size + 1,
        amountMinor,
        currency: 'USD',
        createdAt: new Date(Date.UTC(2026, 10, 25, 0, 0, this.credits.size)).toISOString(),
      };
      this.credits.set(credit.transferId, credit);
      return credit;
    });
  }
}

const clock = { now: () => Date.UTC(2026, 10, 25, 12) };

describe('posting credits in transit', () => {
  it("posts a wallet's next batch in one round trip, without reading it, while only this poster writes it", async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    expect(await post('shop', ledger.pay(100, 200))).toEqual({ posted: 2 });
    expect(await post('shop', ledger.pay(3, 4, 5))).toEqual({ posted: 3 });
    expect(ledger.reads).toBe(1);
    expect(ledger.posts).toHaveLength(2);
    expect(ledger.wallet).toEqual({ exists: true, balance: 312n, seq: 5 });
    expect([...ledger.credits.values()].map((c) => c.postedSeq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reads the wallet again and posts each credit once when its owner paid since the last posting', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    await post('shop', ledger.pay(100));
    // The owner pays 40 out of it: its balance and seq move without this poster.
    ledger.wallet = { exists: true, balance: 60n, seq: 2 };
    expect(await post('shop', ledger.pay(7))).toEqual({ posted: 1 });
    expect(ledger.reads).toBe(2);
    expect(ledger.wallet).toEqual({ exists: true, balance: 67n, seq: 3 });
    expect(ledger.credits.get('t2')?.postedSeq).toBe(3);
  });

  it('posts nothing twice when the stream delivers a batch again', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const credits = ledger.pay(100, 200);
    await post('shop', credits);
    expect(await post('shop', credits)).toEqual({ posted: 0 });
    expect(ledger.wallet).toEqual({ exists: true, balance: 300n, seq: 2 });
  });

  it('posts more credits than one transaction holds in consecutive postings, in the order they were paid', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const credits = ledger.pay(...Array.from({ length: 120 }, (_, i) => i + 1));
    expect(await post('shop', [...credits].reverse())).toEqual({ posted: 120 });
    expect(ledger.posts.map((p) => p.credits.length)).toEqual([49, 49, 22]);
    expect(ledger.reads).toBe(1);
    expect(credits.map((c) => ledger.credits.get(c.transferId)?.postedSeq)).toEqual(
      Array.from({ length: 120 }, (_, i) => i + 1),
    );
  });

  it("has a poller that finds the wallet's lease taken wait, while the holder posts its credits too", async () => {
    const ledger = new OneWallet();
    const [holder, waiter] = [makePostCredits({ ledger, clock }), makePostCredits({ ledger, clock })];
    const [mine, theirs] = [ledger.pay(1, 2), ledger.pay(3, 4)];
    let waiting: Promise<{ posted: number }> | undefined;
    // The other poller's batch arrives while the holder posts its own.
    ledger.onPost = () => {
      waiting ??= waiter('shop', theirs);
    };
    expect(await holder('shop', mine)).toEqual({ posted: 4 });
    expect(await waiting).toEqual({ posted: 0 });
    // Two postings, none refused: the waiting poller never tried the wallet.
    expect(ledger.posts.map((p) => p.credits.map((c) => c.transferId))).toEqual([
      ['t1', 't2'],
      ['t3', 't4'],
    ]);
    expect(ledger.wallet).toEqual({ exists: true, balance: 10n, seq: 4 });
    expect(ledger.lease?.until).toBe(0);
  });

  it("counts the others' credits it posted before it ran out of time", async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const mine = ledger.pay(1, 2);
    ledger.pay(...Array.from({ length: 60 }, () => 1));
    let posts = 0;
    ledger.onPost = () => {
      // Another poller waits once this one holds the lease; the first batch of its credits is
      // posted, then the call's time is up.
      if (ledger.lease) ledger.lease.waiting = posts === 0;
      if (++posts === 2) vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 60_000);
    };
    try {
      expect(await post('shop', mine)).toEqual({ posted: 2 + 49 });
    } finally {
      vi.restoreAllMocks();
    }
    expect(ledger.wallet.seq).toBe(51);
  });

  it('has a waiting poller post its credits itself once the holder lets go without them', async () => {
    const ledger = new OneWallet();
    const [holder, waiter] = [makePostCredits({ ledger, clock }), makePostCredits({ ledger, clock })];
    const [mine, theirs] = [ledger.pay(1, 2), ledger.pay(3, 4)];
    // The index does not list the other poller's credits yet when the holder looks.
    ledger.indexShows = 'none';
    let waiting: Promise<{ posted: number }> | undefined;
    ledger.onPost = () => {
      waiting ??= waiter('shop', theirs);
    };
    expect(await holder('shop', mine)).toEqual({ posted: 2 });
    expect(await waiting).toEqual({ posted: 2 });
    expect(ledger.wallet).toEqual({ exists: true, balance: 10n, seq: 4 });
    // The waiting poller read the wallet the holder had moved before it posted: no refused try.
    expect(ledger.posts).toHaveLength(2);
  });

  it("keeps a waiting poller's signal when it renews the lease, and posts its credits before it lets go", async () => {
    let now = clock.now();
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock: { now: () => now } });
    const mine = ledger.pay(...Array.from({ length: 60 }, () => 1));
    const theirs = ledger.pay(7);
    let posts = 0;
    ledger.onPost = () => {
      // During its first posting another poller says it waits, and time goes by: the next
      // posting renews the lease first.
      if (++posts === 1 && ledger.lease) {
        ledger.lease.waiting = true;
        now += 4_000;
      }
    };
    expect(await post('shop', mine)).toEqual({ posted: 61 });
    expect(ledger.credits.get(theirs[0]?.transferId ?? '')?.postedSeq).toBe(61);
  });

  it('lets go of the lease at once when the index shows nothing more to post, however often others say they wait', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const mine = ledger.pay(1, 2);
    ledger.indexShows = 'none';
    ledger.onPost = () => {
      if (ledger.lease) ledger.lease.waiting = true;
    };
    // Each refused release, a waiting poller signals again (its credits not in the index yet).
    ledger.onOthersWaiting = () => {
      if (ledger.lease) ledger.lease.waiting = true;
    };
    let elapsed = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => clock.now() + elapsed);
    const before = ledger.oldestCreditsReads;
    const reading = ledger.oldestCredits.bind(ledger);
    ledger.oldestCredits = async () => {
      elapsed += 1_000;
      return reading();
    };
    try {
      expect(await post('shop', mine)).toEqual({ posted: 2 });
    } finally {
      vi.restoreAllMocks();
    }
    expect(ledger.oldestCreditsReads - before).toBe(1);
    expect(ledger.lease?.until).toBe(0);
  });

  it('counts the credits it posted when it stops on a failure after them, and lets go of the lease', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const credits = ledger.pay(...Array.from({ length: 60 }, () => 1));
    let posts = 0;
    ledger.onPost = () => {
      if (++posts === 2) throw Object.assign(new Error('DynamoDB said no'), { name: 'ValidationException' });
    };
    const failure = await post('shop', credits).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PostingCutShort);
    expect(failure).toMatchObject({ posted: 49, cause: { name: 'ValidationException' } });
    expect(ledger.wallet.seq).toBe(49);
    expect(ledger.lease?.until).toBe(0);
  });

  it('answers its own credits posted when the sweep for waiting pollers fails', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const mine = ledger.pay(1, 2);
    ledger.pay(3);
    ledger.onPost = () => {
      if (ledger.lease) ledger.lease.waiting = true;
    };
    ledger.oldestCredits = async () => {
      throw Object.assign(new Error('Throttled'), { name: 'TemporarilyUnavailableError' });
    };
    expect(await post('shop', mine)).toEqual({ posted: 2 });
    expect(ledger.lease?.until).toBe(0);
  });

  it('has two calls of one poster on one wallet take turns: neither posts while the other holds the lease', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const [first, second] = [ledger.pay(1, 2), ledger.pay(3, 4)];
    const answers = await Promise.all([post('shop', first), post('shop', second)]);
    expect(answers.reduce((sum, { posted }) => sum + posted, 0)).toBe(4);
    expect(ledger.refused).toBe(0);
    expect(ledger.wallet).toEqual({ exists: true, balance: 10n, seq: 4 });
  });
});
