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
 *
 * Memory: each page is filed as it arrives into compact records of the audited attributes (account
 * names interned), ≈ 4–6 KB per wallet of 10 movements; still one record per entry and transfer,
 * not yet per account (docs/decisions/double-entry-ledger.md has the measurement and the bound).
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
/** Only what the audit checks of an entry: no currency, kind or timestamps. */
type Entry = Pick<
  EntryRecord,
  | 'account'
  | 'seq'
  | 'transferId'
  | 'direction'
  | 'amountMinor'
  | 'balanceAfter'
  | 'counterpartyAccount'
  | 'counterpartySeq'
>;
/** Only what the audit checks of a transfer. */
interface Transfer {
  readonly transferId: string;
  readonly transferKind: string;
  readonly amountMinor: number;
  readonly fromAddress?: string;
  readonly toAddress: string;
  readonly fromSeq?: number;
  readonly toSeq?: number;
}

/*
 * The attributes the audit reads: every other one (currency, timestamps, idempotency records'
 * copies of transfers) is never unmarshalled. The read units are the same (a Scan is charged by
 * item size); the memory is not: the audit keeps one compact record per ledger item instead of
 * every item as read (measured in docs/decisions/double-entry-ledger.md).
 */
const AUDITED = [
  'pk',
  'kind',
  'balance',
  'seq',
  'account',
  'transferId',
  'transferKind',
  'direction',
  'amountMinor',
  'balanceAfter',
  'counterpartyAccount',
  'counterpartySeq',
  'fromAddress',
  'toAddress',
  'fromSeq',
  'toSeq',
] as const;
const projection = {
  ProjectionExpression: AUDITED.map((_, i) => `#a${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(AUDITED.map((name, i) => [`#a${i}`, name])),
};

/** The ledger as scanned: accounts, entries and transfers by item key, each compact. */
interface Ledger {
  itemsScanned: number;
  readonly accounts: Map<string, Account>;
  readonly entries: Map<string, Entry>;
  readonly transfers: Map<string, Transfer>;
  /** Account names, interned. */
  readonly names: Map<string, string>;
}

/**
 * One copy of each account name, however many entries name it (as theirs or as counterparty):
 * the account names are most of an entry's bytes. O(accounts), like the accounts themselves.
 */
function interned(names: Map<string, string>, name: string): string {
  const known = names.get(name);
  if (known !== undefined) return known;
  names.set(name, name);
  return name;
}

const compactEntry = (item: Item, names: Map<string, string>): Entry => ({
  account: interned(names, item.account as string),
  seq: item.seq as number,
  transferId: item.transferId as string,
  direction: item.direction as Entry['direction'],
  amountMinor: item.amountMinor as number,
  balanceAfter: item.balanceAfter as number | bigint,
  counterpartyAccount: interned(names, item.counterpartyAccount as string),
  counterpartySeq: item.counterpartySeq as number,
});

const compactTransfer = (item: Item): Transfer => ({
  transferId: item.transferId as string,
  transferKind: item.transferKind as string,
  amountMinor: item.amountMinor as number,
  fromAddress: item.fromAddress as string | undefined,
  toAddress: item.toAddress as string,
  fromSeq: item.fromSeq as number | undefined,
  toSeq: item.toSeq as number | undefined,
});

/** Files one scanned item into the ledger, compact; items of no account, entry or transfer are dropped. */
function ingest(ledger: Ledger, item: Item): void {
  ledger.itemsScanned++;
  const pk = item.pk as string;
  const account = accountOfKey(pk);
  if (account) {
    ledger.accounts.set(account, {
      key: pk,
      balance: BigInt((item.balance as number | bigint | undefined) ?? 0),
      seq: (item.seq as number | undefined) ?? 0,
    });
  } else if (item.kind === 'entry') ledger.entries.set(pk, compactEntry(item, ledger.names));
  else if (item.kind === 'transfer') ledger.transfers.set(pk, compactTransfer(item));
}

/**
 * The ledger of the table, read by `segments` parallel Scan segments (strongly consistent), each
 * page filed as it arrives: no page or item outlives its compact record.
 */
export async function scanLedger(
  client: DynamoDBDocumentClient,
  tableName: string,
  segments: number,
): Promise<Ledger> {
  const ledger: Ledger = {
    itemsScanned: 0,
    accounts: new Map(),
    entries: new Map(),
    transfers: new Map(),
    names: new Map(),
  };
  await Promise.all(
    Array.from({ length: segments }, async (_, segment) => {
      let ExclusiveStartKey: Item | undefined;
      do {
        const page = await client.send(
          new ScanCommand({
            TableName: tableName,
            Segment: segment,
            TotalSegments: segments,
            ConsistentRead: true,
            ExclusiveStartKey,
            ...projection,
          }),
        );
        for (const item of page.Items ?? []) ingest(ledger, item);
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
    }),
  );
  return ledger;
}

/** The keys each of `items` names, generated one item at a time. */
function* keysOf<T>(items: Iterable<T>, keys: (item: T) => readonly string[]): Generator<string> {
  for (const item of items) yield* keys(item);
}

const signed = (entry: Entry): bigint =>
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
  ledger: Ledger,
): Promise<AuditReport> {
  const { accounts, entries, transfers } = ledger;
  const entryOf = (item: Item) => compactEntry(item, ledger.names);

  let fetchedAfterScan = 0;
  /** Items by key: from the scan, else one consistent BatchGetItem per 100 keys. */
  async function fetch<T>(store: Map<string, T>, keys: Iterable<string>, compact: (item: Item) => T) {
    // Filtered as generated: the keys of a whole ledger are never held at once, only those missing.
    const wanted = new Set<string>();
    for (const key of keys) if (!store.has(key)) wanted.add(key);
    const missing = [...wanted];
    for (let i = 0; i < missing.length; i += 100) {
      let pending = missing.slice(i, i + 100).map((pk) => ({ pk }));
      while (pending.length > 0) {
        const { Responses, UnprocessedKeys } = await client.send(
          new BatchGetCommand({
            RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true, ...projection } },
          }),
        );
        for (const found of Responses?.[tableName] ?? []) {
          store.set(found.pk as string, compact(found));
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
  const inCut: Entry[] = [];
  await fetch(
    entries,
    (function* () {
      for (const [account, { seq }] of accounts) for (let k = 1; k <= seq; k++) yield entryKey(account, k);
    })(),
    entryOf,
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
      inCut.push(entry);
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
    (item) => item,
  );
  for (const [key, entry] of strays) {
    if (!unseen.has(accountKeyOf(entry.account))) broken('entry-orphan', key, `no account ${entry.account}`);
  }

  await fetch(
    entries,
    keysOf(inCut, (e) => [entryKey(e.counterpartyAccount, e.counterpartySeq)]),
    entryOf,
  );
  await fetch(
    transfers,
    keysOf(inCut, (e) => [transferKey(e.transferId)]),
    compactTransfer,
  );
  let inFlight = 0n;
  for (const entry of inCut) {
    const key = entryKey(entry.account, entry.seq);
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
    const from = t.transferKind === 'deposit' ? ISSUANCE_ACCOUNT : `W#${t.fromAddress}`;
    return [entryKey(from, t.fromSeq ?? 0), entryKey(`W#${t.toAddress}`, t.toSeq ?? 0)];
  };
  await fetch(entries, keysOf(transfers.values(), sideKeys), entryOf);
  for (const [key, transfer] of transfers) {
    const [out, into] = sideKeys(transfer).map((k) => entries.get(k as string));
    const matches = (e: Entry | undefined, direction: string) =>
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
    itemsScanned: ledger.itemsScanned,
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
  return auditLedger(client, tableName, await scanLedger(client, tableName, segments));
}
