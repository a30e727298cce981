import { describe, expect, it, vi } from 'vitest';
import type { CreditBatch, CreditInTransit } from '#shared/wallet/hot-wallet/credit-batch.ts';
import type {
  BatchPostingPlan,
  BatchPostingResult,
  CreditStore,
  LeaseHolder,
  PostingPlan,
  PostingResult,
} from '#shared/wallet/hot-wallet/ports.ts';
import { makePostCredits, PostingCutShort } from '#shared/wallet/hot-wallet/post-credits.ts';
import type { AccountState } from '#shared/wallet/model/accounts.ts';
import { busy } from '#shared/wallet/model/movement-retry.ts';

/**
 * One wallet's side of the ledger in memory, refusing a posting as the transaction's conditions
 * do: a wallet that is not as the plan says, a credit posted already or held by a batch, a batch
 * posted already.
 */
class OneWallet implements CreditStore {
  wallet: AccountState = { exists: true, balance: 0n, seq: 0 };
  readonly credits = new Map<string, CreditInTransit>();
  readonly batches = new Map<string, CreditBatch>();
  /** Postings of credits (one level), and of whole batches (two). */
  readonly posts: PostingPlan[] = [];
  readonly batchPosts: BatchPostingPlan[] = [];
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
    const taken = (c: CreditInTransit) => {
      const now = this.credits.get(c.transferId);
      return now?.postedSeq !== undefined || now?.batchId !== undefined;
    };
    if (plan.credits.some(taken)) {
      this.refused++;
      return { kind: 'credit-taken' };
    }
    let { balance, seq } = this.wallet;
    for (const credit of plan.credits) {
      balance += BigInt(credit.amountMinor);
      this.credits.set(credit.transferId, { ...credit, postedSeq: ++seq, postedBy: plan.postingId });
    }
    this.wallet = { exists: true, balance, seq };
    return { kind: 'posted' };
  }

  async batch(batch: CreditBatch): Promise<'batched' | 'credit-taken'> {
    const free = (id: string) => {
      const now = this.credits.get(id);
      return now !== undefined && now.postedSeq === undefined && now.batchId === undefined;
    };
    if (!batch.credits.every((c) => free(c.transferId))) {
      this.refused++;
      return 'credit-taken';
    }
    this.batches.set(batch.batchId, batch);
    for (const { transferId } of batch.credits) {
      this.credits.set(transferId, {
        ...(this.credits.get(transferId) as CreditInTransit),
        batchId: batch.batchId,
      });
    }
    return 'batched';
  }

  async postBatches(plan: BatchPostingPlan): Promise<BatchPostingResult> {
    this.onPost();
    this.batchPosts.push(plan);
    if (plan.wallet.balance !== this.wallet.balance || plan.wallet.seq !== this.wallet.seq) {
      this.refused++;
      return { kind: 'wallet-moved' };
    }
    if (plan.batches.some((b) => this.batches.get(b.batchId)?.posting !== undefined)) {
      this.refused++;
      return { kind: 'batch-taken' };
    }
    let { balance, seq } = this.wallet;
    const postings = plan.batches.map((batch) => {
      const posting = { firstSeq: seq + 1, balanceBefore: balance, postedAt: plan.postedAt };
      for (const credit of batch.credits) balance += BigInt(credit.amountMinor);
      seq += batch.credits.length;
      this.batches.set(batch.batchId, { ...batch, posting });
      return posting;
    });
    this.wallet = { exists: true, balance, seq };
    return { kind: 'posted', postings };
  }

  async complete(
    batch: CreditBatch,
    completedAt: string,
    completer: string,
  ): Promise<'completed' | 'already' | 'busy'> {
    this.onComplete(batch);
    if (this.busyCompletions > 0) {
      this.busyCompletions--;
      return 'busy';
    }
    const now = this.batches.get(batch.batchId);
    if (!now?.posting) throw new Error('not posted');
    if (now.completedAt) return this.completers.get(batch.batchId) === completer ? 'completed' : 'already';
    this.completers.set(batch.batchId, completer);
    const { firstSeq } = now.posting;
    now.credits.forEach(({ transferId }, i) => {
      this.credits.set(transferId, {
        ...(this.credits.get(transferId) as CreditInTransit),
        postedSeq: firstSeq + i,
      });
    });
    this.batches.set(batch.batchId, { ...now, completedAt });
    return 'completed';
  }

  async readBatches(batchIds: readonly string[]) {
    return batchIds.flatMap((id) => this.batches.get(id) ?? []);
  }

  /** Who completed each batch. */
  readonly completers = new Map<string, string>();
  /** How many completions to come another transaction holds an item of (DynamoDB's TransactionConflict). */
  busyCompletions = 0;
  /** Called at each completion, before it is applied. */
  onComplete: (batch: CreditBatch) => void = () => undefined;

  /** The credits' entries, in the order of their seqs. */
  postedInOrder(): string[] {
    return [...this.credits.values()]
      .filter((c) => c.postedSeq !== undefined)
      .sort((a, b) => (a.postedSeq as number) - (b.postedSeq as number))
      .map((c) => c.transferId);
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

  it('posts more credits than one transaction holds in one posting of whole batches, in the order they were paid', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const credits = ledger.pay(...Array.from({ length: 120 }, (_, i) => i + 1));
    expect(await post('shop', [...credits].reverse())).toEqual({ posted: 120 });
    expect(ledger.posts).toHaveLength(0);
    expect(ledger.batchPosts.map((p) => p.batches.map((b) => b.credits.length))).toEqual([[49, 49, 22]]);
    expect(ledger.reads).toBe(1);
    expect(ledger.wallet).toEqual({ exists: true, balance: 7260n, seq: 120 });
    expect(ledger.postedInOrder()).toEqual(credits.map((c) => c.transferId));
  });

  it('takes thousands of credits into the wallet in one transaction on it', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    expect(await post('shop', ledger.pay(...Array.from({ length: 4_851 }, () => 1)))).toEqual({
      posted: 4_851,
    });
    // 99 batches of 49: the wallet's item is written once.
    expect(ledger.batchPosts).toHaveLength(1);
    expect(ledger.wallet).toEqual({ exists: true, balance: 4_851n, seq: 4_851 });
  });

  it('posts a credit a batch holds with its batch, never on its own, whatever the stream announced', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    await post('shop', ledger.pay(1));
    // Another call batched these and stopped; the stream's images of them say nothing of it.
    const credits = ledger.pay(2, 3);
    await ledger.batch({ batchId: 'b1', address: 'shop', credits });
    expect(await post('shop', credits)).toEqual({ posted: 2 });
    expect(ledger.posts).toHaveLength(2);
    expect(ledger.refused).toBe(1);
    expect(ledger.wallet).toEqual({ exists: true, balance: 6n, seq: 3 });
    expect(ledger.batches.get('b1')?.completedAt).toBeDefined();
    expect(ledger.postedInOrder()).toEqual(['t1', 't2', 't3']);
  });

  it('completes the batches a call posted before it stopped, when their credits come again', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const credits = ledger.pay(...Array.from({ length: 60 }, () => 1));
    ledger.onComplete = () => {
      throw Object.assign(new Error('The poster stopped'), { name: 'ValidationException' });
    };
    await expect(post('shop', credits)).rejects.toMatchObject({ posted: 0 });
    // The money is the wallet's; its entries are not written yet.
    expect(ledger.wallet).toEqual({ exists: true, balance: 60n, seq: 60 });
    ledger.onComplete = () => undefined;
    expect(await post('shop', credits)).toEqual({ posted: 60 });
    expect(ledger.batchPosts).toHaveLength(1);
    expect(ledger.wallet).toEqual({ exists: true, balance: 60n, seq: 60 });
    expect(ledger.postedInOrder()).toEqual(credits.map((c) => c.transferId));
  });

  it('completes a batch again when another transaction held one of its items, rather than take it as done', async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const credits = ledger.pay(...Array.from({ length: 60 }, () => 1));
    ledger.busyCompletions = 2;
    expect(await post('shop', credits)).toEqual({ posted: 60 });
    expect(ledger.postedInOrder()).toEqual(credits.map((c) => c.transferId));
  });

  it('posts each credit once when two pollers are handed the same credits at once', async () => {
    const ledger = new OneWallet();
    const [first, second] = [makePostCredits({ ledger, clock }), makePostCredits({ ledger, clock })];
    const credits = ledger.pay(...Array.from({ length: 150 }, (_, i) => i + 1));
    const answers = await Promise.all([first('shop', credits), second('shop', [...credits].reverse())]);
    expect(answers.reduce((sum, { posted }) => sum + posted, 0)).toBe(150);
    expect(ledger.wallet).toEqual({ exists: true, balance: 11_325n, seq: 150 });
    expect(new Set(ledger.postedInOrder()).size).toBe(150);
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
    // Two postings, none refused: the waiting poller never tried the wallet. It batched its credits
    // while it waited, and the holder took the batch in whole.
    expect(ledger.posts.map((p) => p.credits.map((c) => c.transferId))).toEqual([['t1', 't2']]);
    expect(ledger.batchPosts.map((p) => p.batches.map((b) => b.credits.map((c) => c.transferId)))).toEqual([
      [['t3', 't4']],
    ]);
    expect(ledger.refused).toBe(0);
    expect(ledger.wallet).toEqual({ exists: true, balance: 10n, seq: 4 });
    expect(ledger.lease?.until).toBe(0);
  });

  it("counts the others' credits it posted before it ran out of time", async () => {
    const ledger = new OneWallet();
    const post = makePostCredits({ ledger, clock });
    const mine = ledger.pay(1, 2);
    ledger.pay(...Array.from({ length: 60 }, () => 1));
    let completions = 0;
    ledger.onPost = () => {
      // Another poller waits once this one holds the lease.
      if (ledger.lease) ledger.lease.waiting = ledger.posts.length === 0;
    };
    ledger.onComplete = () => {
      // The first batch of the others' credits is completed, then the call's time is up.
      if (++completions === 2) {
        vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 60_000);
        throw busy('Throttled');
      }
    };
    try {
      expect(await post('shop', mine)).toEqual({ posted: 2 + 49 });
    } finally {
      vi.restoreAllMocks();
    }
    expect(ledger.wallet.seq).toBe(62);
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
    expect(ledger.posts.length + ledger.batchPosts.length).toBe(2);
    expect(ledger.refused).toBe(0);
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
    let completions = 0;
    ledger.onComplete = () => {
      if (++completions === 2)
        throw Object.assign(new Error('DynamoDB said no'), { name: 'ValidationException' });
    };
    const failure = await post('shop', credits).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PostingCutShort);
    expect(failure).toMatchObject({ posted: 49, cause: { name: 'ValidationException' } });
    expect(ledger.wallet.seq).toBe(60);
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
