import { type DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/*
 * What the bank tests (test/e2e/bank.test.ts over HTTP, test/integration/bank-faults.test.ts
 * under DynamoDB faults) share: the concurrent load, and the readings of the ledger and the
 * history their invariants are checked against.
 */

/** Runs `task(0)` … `task(count - 1)`, at most `concurrency` at a time: the results, in order. */
export async function inParallel<T>(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

export interface LedgerRecords {
  readonly transfers: readonly {
    transferId: string;
    fromAddress: string;
    toAddress: string;
    amountMinor: number;
  }[];
  readonly deposits: readonly { address: string; amountMinor: number }[];
}

/**
 * The ledger records (transfers, deposits) naming one of `addresses`, read with a consistent scan
 * of the table through `client` (DynamoDB Local itself, never a fault proxy).
 */
export async function ledgerRecords(
  client: DynamoDBClient,
  tableName: string,
  addresses: ReadonlySet<string>,
): Promise<LedgerRecords> {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateScan({ client }, { TableName: tableName, ConsistentRead: true })) {
    items.push(...(page.Items ?? []).map((item) => unmarshall(item)));
  }
  const names = (...values: unknown[]) => values.some((v) => addresses.has(v as string));
  return {
    transfers: items.filter(
      (i) => i.kind === 'transfer' && i.transferKind !== 'deposit' && names(i.fromAddress, i.toAddress),
    ) as unknown as LedgerRecords['transfers'],
    deposits: items.filter(
      (i) => i.kind === 'deposit' && names(i.address),
    ) as unknown as LedgerRecords['deposits'],
  };
}

/** The balance the ledger explains for `address`, in minor units: deposits plus credits minus debits. */
export function ledgerBalance({ transfers, deposits }: LedgerRecords, address: string): number {
  const total = (amounts: readonly { amountMinor: number }[]) =>
    amounts.reduce((sum, { amountMinor }) => sum + amountMinor, 0);
  return (
    total(deposits.filter((d) => d.address === address)) +
    total(transfers.filter((t) => t.toAddress === address)) -
    total(transfers.filter((t) => t.fromAddress === address))
  );
}

/** One line of GET /api/wallet/transfers, as far as the balance goes. */
export interface HistoryLine {
  readonly direction: string;
  readonly amount: number;
  readonly balanceAfter: number;
}

/** Cents of a two-decimal amount as the API writes it. */
export const cents = (decimal: number): number => Math.round(decimal * 100);

/** A wallet's whole history (newest first), in cents: its signed amounts summed, and the newest balance after. */
export function historyTotals(lines: readonly HistoryLine[]): { sum: number; newest: number } {
  return {
    sum: lines.reduce((sum, l) => sum + (l.direction === 'in' ? cents(l.amount) : -cents(l.amount)), 0),
    newest: cents(lines[0]?.balanceAfter ?? 0),
  };
}
