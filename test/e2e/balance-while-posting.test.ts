import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cents, inParallel } from '../support/bank.ts';
import { uniqueSub } from '../support/events.ts';
import { fund, markHot } from './fund.ts';
import { call, tokenFor } from './http.ts';

/*
 * Issue 45.1, as it was found: many pay one merchant at once, its wallet hot so that the credit
 * poster batches and posts their credits, while the merchant polls its balance. Each answer's
 * `balance + pending` must be what was paid in at one moment of that call: never more than what
 * had been paid when it answered (a credit counted twice), never less than what had been paid when
 * it was asked (a credit in neither). The old read (the pending index, then the wallet again)
 * showed credits posted between its two reads in both.
 */

// Few enough for DynamoDB Local, which runs one transaction at a time for the whole run, and for
// the bundled project. Each payer pays at least PAYMENTS_EACH times, and goes on (up to
// MAX_PAYMENTS_EACH) until reads have answered while credits were in transit: a hot wallet's read
// can take as long as a dozen payments on this machine, and with a fixed count the poster could
// post everything before any read answered (it did: 2 runs of 6 saw no credit in transit).
const PAYERS = 4;
const PAYMENTS_EACH = 12;
const MAX_PAYMENTS_EACH = 100;
const READS_WITH_PENDING = 3;
const FUNDED_CENTS = 1_00;
/** The most one payment pays, in cents. */
const MAX_CENTS = 19;

interface Read {
  /** Paid in (funding included) when the read was sent: every payment answered 200 by then. */
  readonly paidBefore: number;
  /** Paid in at most when it answered: every payment sent by then. */
  readonly paidAtMost: number;
  readonly balance: number;
  readonly pending: number;
}

describe('the balance of a wallet paid while it reads', () => {
  it('never counts a credit twice nor misses one paid before the read, while credits are posted', async () => {
    const merchant = uniqueSub('merchant');
    const merchantToken = await tokenFor('read:wallet', { sub: merchant });
    const subs = Array.from({ length: PAYERS }, () => uniqueSub('payer'));
    await fund([merchant], FUNDED_CENTS);
    // Enough for every payment a payer may make: funded with 10.00, payers that went on to their
    // 66th payment (reads slow to see a credit in transit, in a whole-suite run) ran dry, and their
    // payments were refused 422, which failed the test before it could judge a read.
    await fund(subs, MAX_PAYMENTS_EACH * MAX_CENTS);
    // Hot from the start, rather than once its payers' payments meet: on a busy machine they may
    // come one by one, every credit then direct, and no read would run beside a posting (CI saw it).
    await markHot(merchant, 120_000);
    const payers = await Promise.all(subs.map((sub) => tokenFor('read:wallet write:wallet', { sub })));

    let answered = FUNDED_CENTS;
    let sent = FUNDED_CENTS;
    const statuses: number[] = [];
    let paying = true;
    const reads: Read[] = [];
    const seenInTransit = () => reads.filter((read) => read.pending > 0).length >= READS_WITH_PENDING;
    const payments = inParallel(PAYERS, PAYERS, async (i) => {
      for (let n = 0; n < MAX_PAYMENTS_EACH && (n < PAYMENTS_EACH || !seenInTransit()); n++) {
        const amount = randomInt(11, MAX_CENTS + 1);
        sent += amount;
        const response = await call('POST', '/api/wallet/send', {
          token: payers[i] as string,
          json: { toAddress: merchant, amount: amount / 100 },
          headers: { 'idempotency-key': randomUUID() },
        });
        statuses.push(response.status);
        if (response.status === 200) answered += amount;
      }
    }).finally(() => {
      paying = false;
    });

    const poll = async () => {
      // Until the payments end, then as long again: the poster posts what they left in transit.
      for (let after = 0; paying || after < 20; after += paying ? 0 : 1) {
        const paidBefore = answered;
        const response = await call('GET', '/api/wallet/balance', { token: merchantToken });
        expect(response.status, response.text).toBe(200);
        const { balance, pending } = response.json as { balance: number; pending: number };
        reads.push({ paidBefore, paidAtMost: sent, balance: cents(balance), pending: cents(pending) });
        // As the merchant who found it polled: every 50 ms.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await Promise.all([payments, poll()]);

    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // The postings ran while the merchant read: reads saw credits in transit.
    expect(seenInTransit()).toBe(true);
    const wrong = reads.filter(
      (read) =>
        read.balance + read.pending > read.paidAtMost || read.balance + read.pending < read.paidBefore,
    );
    expect(wrong).toEqual([]);
    // Every payment is in the last read: funded, plus all paid.
    const last = reads.at(-1) as Read;
    expect(last.balance + last.pending).toBe(answered);
  }, 180_000);
});
