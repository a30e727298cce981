import { execFile } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { localClient } from '#infra/local/dynamodb-local.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import {
  cents,
  type HistoryLine,
  historyTotals,
  inParallel,
  ledgerBalance,
  ledgerRecords,
} from '../support/bank.ts';
import { uniqueSub } from '../support/events.ts';
import { call, fundViaCli, gateway, openWallet, tokenFor } from './http.ts';

/*
 * A bank test in the spirit of Jepsen's: funded wallets, many concurrent random transfers over
 * HTTP through the local gateway, then the invariants: money is conserved, no balance is negative,
 * and every balance equals its deposits plus credits minus debits in the ledger records.
 */

const WALLETS = 8;
const INITIAL_CENTS = 100_00;
const TRANSFERS = 240;
// The 16 clients among 8 wallets; half as many at once against the bundles, whose
// execution environments are processes of their own beside the source project's run.
const CONCURRENCY = gateway.mode === 'bundled' ? 8 : 16;

interface Wallet {
  readonly sub: string;
  readonly token: string;
}

/**
 * The wallet's available balance once nothing is pending for it (the poster has posted its
 * credits). A loaded suite has taken the poster a minute and more (credit-batches.test.ts), so the
 * bound is generous, and passing it fails as what it is, rather than a sum that does not add up.
 */
async function balanceCents(wallet: Wallet): Promise<number> {
  const until = Date.now() + 90_000;
  for (;;) {
    const response = await call('GET', '/api/wallet/balance', { token: wallet.token });
    expect(response.status).toBe(200);
    const { balance, pending } = response.json as { balance: number; pending: number };
    if (pending === 0) return cents(balance);
    if (Date.now() > until) throw new Error(`${wallet.sub} still has ${pending} pending after 90 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every ledger record (transfers and deposits) that touches one of `addresses`, from DynamoDB Local. */
async function ledger(addresses: ReadonlySet<string>) {
  const stack = await readRunningStack(gateway.port, gateway.stateDir);
  if (!stack) throw new Error('The e2e stack is not running');
  const client = localClient(stack.dynamodbEndpoint);
  try {
    return await ledgerRecords(client, stack.env.WALLETS_TABLE_NAME as string, addresses);
  } finally {
    client.destroy();
  }
}

/** A wallet's history over GET /api/wallet/transfers, newest first, in pages of 25. */
async function historyOf(wallet: Wallet): Promise<HistoryLine[]> {
  const lines: HistoryLine[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ limit: '25', ...(cursor ? { cursor } : {}) });
    const response = await call('GET', `/api/wallet/transfers?${query}`, { token: wallet.token });
    expect(response.status).toBe(200);
    const page = response.json as { items: HistoryLine[]; nextCursor?: string };
    lines.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return lines;
}

/** `npm run wallet:audit` on the e2e stack's table: its exit code and output. */
async function auditCommand(): Promise<{ code: number; stdout: string }> {
  const stack = await readRunningStack(gateway.port, gateway.stateDir);
  if (!stack) throw new Error('The e2e stack is not running');
  const args = ['scripts/wallet-audit.ts', '--table', stack.env.WALLETS_TABLE_NAME as string];
  args.push('--endpoint', stack.dynamodbEndpoint, '--region', 'us-east-1');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, {
      env: { ...process.env, ...stack.env },
    });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

describe('bank', () => {
  it('conserves money, never overdraws, and matches the ledger under concurrent random transfers', {
    timeout: 120_000,
  }, async () => {
    const wallets: Wallet[] = await Promise.all(
      Array.from({ length: WALLETS }, async () => {
        const sub = uniqueSub('bank');
        return { sub, token: await tokenFor('read:wallet write:wallet', { sub }) };
      }),
    );
    await Promise.all(wallets.map((w) => fundViaCli(w.sub, (INITIAL_CENTS / 100).toFixed(2))));

    const outcomes = await inParallel(TRANSFERS, CONCURRENCY, async () => {
      const from = wallets[randomInt(WALLETS)] as Wallet;
      const others = wallets.filter((w) => w !== from);
      const to = others[randomInt(others.length)] as Wallet;
      const amount = (randomInt(1, 60_00) / 100).toFixed(2);
      const headers = { 'idempotency-key': randomUUID(), 'content-type': 'application/json' };
      const send = () =>
        call('POST', '/api/wallet/send', {
          token: from.token,
          body: `{"toAddress":"${to.sub}","amount":${amount}}`,
          headers,
        });
      // One in four requests is sent twice at once: a retry racing its original.
      const responses = randomInt(4) === 0 ? await Promise.all([send(), send()]) : [await send()];
      return responses.map((r) => ({
        status: r.status,
        json: r.json as { transferId?: string; type?: string },
      }));
    });

    const responses = outcomes.flat();
    // Contention is ours to absorb: every client ends with a payment or a refusal, never a 503.
    for (const r of responses) {
      expect([200, 422], JSON.stringify(r)).toContain(r.status);
      if (r.status === 422) expect(r.json.type).toMatch(/insufficient-funds$/);
    }
    const completed = new Set(responses.filter((r) => r.status === 200).map((r) => r.json.transferId));
    expect(completed.size).toBeGreaterThan(TRANSFERS / 4);
    // A duplicated request answers with the same transfer, never a second one.
    for (const pair of outcomes.filter((o) => o.length === 2)) {
      const [a, b] = pair;
      if (a?.status === 200 && b?.status === 200) expect(a.json.transferId).toBe(b.json.transferId);
    }

    const addresses = new Set(wallets.map((w) => w.sub));
    const records = await ledger(addresses);
    expect(new Set(records.transfers.map((t) => t.transferId))).toEqual(completed);

    const balances = await Promise.all(wallets.map(balanceCents));
    expect(balances.reduce((a, b) => a + b, 0)).toBe(WALLETS * INITIAL_CENTS);
    for (const [i, wallet] of wallets.entries()) {
      expect(balances[i]).toBeGreaterThanOrEqual(0);
      expect(balances[i]).toBe(ledgerBalance(records, wallet.sub));
      // Its history, page by page over HTTP, explains the balance line by line.
      expect(historyTotals(await historyOf(wallet))).toEqual({ sum: balances[i], newest: balances[i] });
    }
    // And the books of the whole stack balance: npm run wallet:audit exits 0.
    const audit = await auditCommand();
    expect(audit.code, audit.stdout).toBe(0);
    expect(JSON.parse(audit.stdout.split('\n')[0] as string)).toMatchObject({
      breaks: 0,
      grandTotalMinor: '0',
    });
  });

  it('lets one wallet send 16 payments at once, each answered 200, to the cent', {
    timeout: 60_000,
  }, async () => {
    const sub = uniqueSub('bank');
    const token = await tokenFor('read:wallet write:wallet', { sub });
    const recipients = Array.from({ length: 16 }, () => uniqueSub('to'));
    await Promise.all([fundViaCli(sub, '16'), ...recipients.map(openWallet)]);
    const responses = await Promise.all(
      recipients.map((to) =>
        call('POST', '/api/wallet/send', { token, json: { toAddress: to, amount: 0.5 } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(16).fill(200));
    expect(await balanceCents({ sub, token })).toBe(8_00);
  });

  it('lets exactly one of 10 concurrent sends of 60 from a balance of 100 through', async () => {
    const sub = uniqueSub('bank');
    const token = await tokenFor('read:wallet write:wallet', { sub });
    const to = uniqueSub();
    await Promise.all([fundViaCli(sub, '100'), openWallet(to)]);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        call('POST', '/api/wallet/send', { token, json: { toAddress: to, amount: 60 } }),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status !== 200).every((r) => r.status === 422)).toBe(true);
    expect(await balanceCents({ sub, token })).toBe(40_00);
  });

  it('moves money once for concurrent replays of one Idempotency-Key', async () => {
    const sub = uniqueSub('bank');
    const token = await tokenFor('read:wallet write:wallet', { sub });
    const to = uniqueSub();
    await Promise.all([fundViaCli(sub, '50'), openWallet(to)]);
    const headers = { 'idempotency-key': randomUUID() };
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        call('POST', '/api/wallet/send', { token, json: { toAddress: to, amount: 5 }, headers }),
      ),
    );
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((r) => (r.json as { transferId: string }).transferId)).size).toBe(1);
    expect(await balanceCents({ sub, token })).toBe(45_00);
    const { transfers } = await ledger(new Set([sub]));
    expect(transfers).toHaveLength(1);
  });
});
