import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TouchReportEntry } from '#infra/local/dynamodb-conflicts.ts';
import { TOUCHES_PATH } from '#infra/local/dynamodb-proxy.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { cents, inParallel } from '../support/bank.ts';
import { uniqueSub } from '../support/events.ts';
import { fund } from './fund.ts';
import { call, gateway, tokenFor } from './http.ts';

/*
 * A wallet that many pay at once, over HTTP through the local gateway, whose DynamoDB behaves as
 * DynamoDB on AWS does under contention (npm start's conflict mode): every payment is taken, the
 * merchant's pending amount includes each at once, its available balance each soon after, and its
 * wallet item is not what the payments contend on.
 */

// Fewer than the bench's 100 clients × 5 (npm run bench, BENCHMARKS.md): DynamoDB Local runs one
// transaction at a time for the whole suite, which runs beside this test.
const CLIENTS = 30;
const PAYMENTS_EACH = 4;

interface Balance {
  readonly balance: number;
  readonly pending: number;
}

async function balanceOf(token: string): Promise<Balance> {
  const response = await call('GET', '/api/wallet/balance', { token });
  expect(response.status).toBe(200);
  return response.json as Balance;
}

/**
 * Polls the balance until nothing is pending (the poster has posted every credit), at most `ms`:
 * generous, since a loaded suite has taken the poster a minute and more (credit-batches.test.ts).
 */
async function settled(token: string, ms = 90_000): Promise<Balance> {
  const until = Date.now() + ms;
  for (;;) {
    const now = await balanceOf(token);
    if (now.pending === 0 || Date.now() > until) return now;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How often the proxy saw the item `pk` of the wallets table named in a write that failed (a transaction cancelled, a write refused). */
async function failedTouchesOf(pk: string): Promise<number> {
  const stack = await readRunningStack(gateway.port, gateway.stateDir);
  if (!stack) throw new Error('The e2e stack is not running');
  const response = await fetch(new URL(TOUCHES_PATH, stack.dynamodbEndpoint));
  expect(response.status).toBe(200);
  const report = (await response.json()) as TouchReportEntry[];
  return report
    .filter((entry) => entry.table === stack.env.WALLETS_TABLE_NAME && entry.key.pk === pk)
    .reduce((sum, entry) => sum + entry.failed, 0);
}

describe('a wallet many pay at once', () => {
  it('takes every payment of many clients paying it at once, has each in its pending amount at once and posted soon, and is not what they contend on', async () => {
    const merchant = uniqueSub('merchant');
    const merchantToken = await tokenFor('read:wallet write:wallet', { sub: merchant });
    await balanceOf(merchantToken); // opens the merchant's wallet
    const subs = Array.from({ length: CLIENTS }, () => uniqueSub('payer'));
    await fund(subs, 10_00);
    const payers = await Promise.all(subs.map((sub) => tokenFor('read:wallet write:wallet', { sub })));
    /** Each answer's status, with the problem's detail when it is not 200: what went wrong, if anything. */
    const statuses: (number | string)[] = [];
    let paidCents = 0;
    const payRound = (payments: number) =>
      inParallel(CLIENTS, CLIENTS, async (i) => {
        for (let n = 0; n < payments; n++) {
          const response = await call('POST', '/api/wallet/send', {
            token: payers[i] as string,
            json: { toAddress: merchant, amount: 1 },
            headers: { 'idempotency-key': randomUUID() },
          });
          const problem = response.json as { detail?: string } | undefined;
          statuses.push(response.status === 200 ? 200 : `${response.status} ${problem?.detail ?? ''}`);
          if (response.status === 200) paidCents += 100;
        }
      });

    // The first burst finds the wallet claimed by the first of them and marks it hot; every payment
    // is taken, and none tries the merchant's wallet only to be refused on it, the first burst
    // included (the bench's budget: at most a tenth of a touch per payment).
    const before = await failedTouchesOf(`WALLET#${merchant}`);
    await payRound(1);
    await payRound(PAYMENTS_EACH);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const failed = (await failedTouchesOf(`WALLET#${merchant}`)) - before;
    expect(failed).toBeLessThanOrEqual((CLIENTS * (PAYMENTS_EACH + 1)) / 10);

    // Every payment answered 200 is in the merchant's available balance or its pending amount.
    const right = await balanceOf(merchantToken);
    // Each in one of the two, never in both (issue 45.1), while the poster posts them.
    expect(cents(right.balance) + cents(right.pending)).toBe(paidCents);
    const posted = await settled(merchantToken);
    expect(posted.pending).toBe(0);
    expect(cents(posted.balance)).toBe(CLIENTS * (PAYMENTS_EACH + 1) * 100);
  }, 180_000);
});
