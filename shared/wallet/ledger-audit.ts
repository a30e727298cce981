import { BatchGetCommand, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import {
  accountKey as accountKeyOf,
  type EntryRecord,
  entryKey,
  ISSUANCE_ACCOUNT,
  transferKey,
} from './ledger-keys.ts';

/*
 * The audit of the wallet ledger: every invariant of double entry, checked on a live table.
 *
 * A Scan is no snapshot: movements commit while it runs. So each account is audited up to the
 * seq the scan saw it at (its "cut"): its entries 1..seq committed no later than that read, and
 * they are immutable, so one the scan passed before it existed is fetched by key, strongly
 * consistent, before anything is called broken. A movement whose one side is within its account's
 * cut and the other not is in flight for the audit: the grand total leaves that side out.
 */

/** One broken invariant, named so an operator can find the item. */
export interface AuditBreak {
  readonly invariant:
    | 'entry-missing'
    | 'running-balance'
    | 'balance-vs-entries'
    | 'negative-balance'
    | 'entry-unpaired'
    | 'transfer-mismatch'
    | 'transfer-entries'
    | 'entry-orphan'
    | 'grand-total';
  /** The item's key (or "ledger" for the grand total). */
  readonly subject: string;
  readonly detail: string;
}

export interface AuditReport {
  readonly itemsScanned: number;
  readonly accounts: number;
  readonly entries: number;
  readonly transfers: number;
  /** Sum of every balance, issuance included, net of movements in flight: 0 when the books balance. */
  readonly grandTotalMinor: bigint;
  /** Minus everything ever issued. */
  readonly issuanceBalanceMinor: bigint;
  /** Items fetched by key after the scan (entries or transfers committed while it ran). */
  readonly fetchedAfterScan: number;
  readonly breaks: readonly AuditBreak[];
}

interface Account {
  readonly key: string;
  readonly balance: bigint;
  readonly seq: number;
}
type Item = Record<string, unknown>;
type Transfer = Item & { transferId: string; amountMinor: number; fromSeq?: number; toSeq?: number };

/** Every item of the table, read by `segments` parallel Scan segments (strongly consistent). */
export async function scanTable(client: DynamoDBDocumentClient, tableName: string, segments: number) {
  const pages = await Promise.all(
    Array.from({ length: segments }, async (_, segment) => {
      const items: Item[] = [];
      let ExclusiveStartKey: Item | undefined;
      do {
        const page = await client.send(
          new ScanCommand({
            TableName: tableName,
            Segment: segment,
            TotalSegments: segments,
            ConsistentRead: true,
            ExclusiveStartKey,
          }),
        );
        items.push(...(page.Items ?? []));
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return items;
    }),
  );
  return pages.flat();
}

const signed = (entry: EntryRecord): bigint =>
  entry.direction === 'in' ? BigInt(entry.amountMinor) : -BigInt(entry.amountMinor);

/** The account of an account item's key. */
function accountOfKey(pk: string): string | undefined {
  if (pk === 'ACCOUNT#ISSUANCE') return ISSUANCE_ACCOUNT;
  return pk.startsWith('WALLET#') ? `W#${pk.slice('WALLET#'.length)}` : undefined;
}

/** Audits a scanned ledger, fetching by key (consistent) what the scan may have passed too early. */
export async function auditLedger(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Item[],
): Promise<AuditReport> {
  const accounts = new Map<string, Account>();
  const entries = new Map<string, EntryRecord>();
  const transfers = new Map<string, Transfer>();
  for (const item of items) {
    const pk = item.pk as string;
    const account = accountOfKey(pk);
    if (account) {
      accounts.set(account, {
        key: pk,
        balance: BigInt((item.balance as number | bigint | undefined) ?? 0),
        seq: (item.seq as number | undefined) ?? 0,
      });
    } else if (item.kind === 'entry') entries.set(pk, item as unknown as EntryRecord);
    else if (item.kind === 'transfer') transfers.set(pk, item as Transfer);
  }

  let fetchedAfterScan = 0;
  /** Items by key: from the scan, else one consistent BatchGetItem per 100 keys. */
  async function fetch<T>(store: Map<string, T>, keys: readonly string[]): Promise<void> {
    const missing = [...new Set(keys.filter((key) => !store.has(key)))];
    for (let i = 0; i < missing.length; i += 100) {
      let pending = missing.slice(i, i + 100).map((pk) => ({ pk }));
      while (pending.length > 0) {
        const { Responses, UnprocessedKeys } = await client.send(
          new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const found of Responses?.[tableName] ?? []) {
          store.set(found.pk as string, found as T);
          fetchedAfterScan++;
        }
        pending = (UnprocessedKeys?.[tableName]?.Keys as { pk: string }[] | undefined) ?? [];
      }
    }
  }

  const breaks: AuditBreak[] = [];
  const broken = (invariant: AuditBreak['invariant'], subject: string, detail: string) =>
    breaks.push({ invariant, subject, detail });
  const seenSeq = (account: string) => accounts.get(account)?.seq ?? 0;

  // Entries within each account's cut, and the counterparts and transfers they name.
  const inCut: [string, EntryRecord][] = [];
  await fetch(
    entries,
    [...accounts].flatMap(([account, { seq }]) =>
      Array.from({ length: seq }, (_, k) => entryKey(account, k + 1)),
    ),
  );
  for (const [account, state] of accounts) {
    let running = 0n;
    for (let seq = 1; seq <= state.seq; seq++) {
      const key = entryKey(account, seq);
      const entry = entries.get(key);
      if (!entry) {
        broken('entry-missing', key, `${state.key} is at seq ${state.seq} but has no entry ${seq}`);
        continue;
      }
      inCut.push([key, entry]);
      running += signed(entry);
      if (BigInt(entry.balanceAfter) !== running) {
        broken(
          'running-balance',
          key,
          `balanceAfter ${entry.balanceAfter} but the entries up to it sum to ${running}`,
        );
      }
    }
    if (running !== state.balance) {
      broken(
        'balance-vs-entries',
        state.key,
        `balance ${state.balance} but its ${state.seq} entries sum to ${running}`,
      );
    }
    if (account !== ISSUANCE_ACCOUNT && state.balance < 0n) {
      broken('negative-balance', state.key, `balance ${state.balance}`);
    }
    if (account === ISSUANCE_ACCOUNT && state.balance > 0n) {
      broken('negative-balance', state.key, `the issuance account holds ${state.balance}, more than nothing`);
    }
  }
  // An entry of an account the scan did not see: opened since, or an orphan (read its account to tell).
  const unseen = new Map<string, Item>();
  const strays = [...entries].filter(([, entry]) => !accounts.has(entry.account));
  await fetch(
    unseen,
    strays.map(([, entry]) => accountKeyOf(entry.account)),
  );
  for (const [key, entry] of strays) {
    if (!unseen.has(accountKeyOf(entry.account))) broken('entry-orphan', key, `no account ${entry.account}`);
  }

  await fetch(
    entries,
    inCut.map(([, e]) => entryKey(e.counterpartyAccount, e.counterpartySeq)),
  );
  await fetch(
    transfers,
    inCut.map(([, e]) => transferKey(e.transferId)),
  );
  let inFlight = 0n;
  for (const [key, entry] of inCut) {
    const otherKey = entryKey(entry.counterpartyAccount, entry.counterpartySeq);
    const other = entries.get(otherKey);
    if (
      !other ||
      other.transferId !== entry.transferId ||
      other.amountMinor !== entry.amountMinor ||
      other.direction === entry.direction ||
      other.counterpartyAccount !== entry.account ||
      other.counterpartySeq !== entry.seq
    ) {
      broken('entry-unpaired', key, `its other side ${otherKey} is ${other ? 'not its mirror' : 'missing'}`);
    } else if (entry.counterpartySeq > seenSeq(entry.counterpartyAccount)) {
      inFlight += signed(entry);
    }
    const transfer = transfers.get(transferKey(entry.transferId));
    const side = entry.direction === 'out' ? transfer?.fromSeq : transfer?.toSeq;
    if (!transfer || transfer.amountMinor !== entry.amountMinor || side !== entry.seq) {
      broken(
        'transfer-mismatch',
        key,
        `transfer ${entry.transferId} ${transfer ? 'does not match it' : 'is missing'}`,
      );
    }
  }
  // Every transfer has exactly its two entries, whatever the cut (entries commit with it).
  const sideKeys = (t: Transfer) => {
    const from = t.transferKind === 'deposit' ? ISSUANCE_ACCOUNT : `W#${t.fromAddress as string}`;
    return [entryKey(from, t.fromSeq ?? 0), entryKey(`W#${t.toAddress as string}`, t.toSeq ?? 0)];
  };
  await fetch(entries, [...transfers.values()].flatMap(sideKeys));
  for (const [key, transfer] of transfers) {
    const [out, into] = sideKeys(transfer).map((k) => entries.get(k as string));
    const matches = (e: EntryRecord | undefined, direction: string) =>
      e?.transferId === transfer.transferId &&
      e.direction === direction &&
      e.amountMinor === transfer.amountMinor;
    if (!matches(out, 'out') || !matches(into, 'in')) {
      broken('transfer-entries', key, 'does not have exactly its two matching entries');
    }
  }

  const total = [...accounts.values()].reduce((sum, a) => sum + a.balance, 0n) - inFlight;
  if (total !== 0n) broken('grand-total', 'ledger', `balances sum to ${total}, not 0`);
  return {
    itemsScanned: items.length,
    accounts: accounts.size,
    entries: entries.size,
    transfers: transfers.size,
    grandTotalMinor: total,
    issuanceBalanceMinor: accounts.get(ISSUANCE_ACCOUNT)?.balance ?? 0n,
    fetchedAfterScan,
    breaks,
  };
}

/** Scans and audits a table: what `npm run wallet:audit` and the scheduled audit run. */
export async function auditTable(client: DynamoDBDocumentClient, tableName: string, segments = 4) {
  return auditLedger(client, tableName, await scanTable(client, tableName, segments));
}
