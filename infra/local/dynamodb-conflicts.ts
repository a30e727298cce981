/**
 * DynamoDB's transaction conflicts, which DynamoDB Local does not have: it runs one transaction at
 * a time, so a transaction never meets another one in flight. The proxy (`dynamodb-proxy.ts`)
 * asks this tracker, before it forwards a write or a TransactGetItems, whether DynamoDB would let
 * it through, as the developer guide's "Transaction conflict handling" describes:
 * - a TransactWriteItems naming an item that another TransactWriteItems, or a PutItem, UpdateItem
 *   or DeleteItem, has in flight is cancelled, each such action with reason `TransactionConflict`
 *   (a ConditionCheck names its item as much as a write does);
 * - a PutItem, UpdateItem or DeleteItem on an item in a TransactWriteItems in flight fails with
 *   `TransactionConflictException`;
 * - a TransactGetItems naming an item that a write has in flight is cancelled likewise;
 * - GetItem, BatchGetItem, Query and Scan never conflict.
 * A write's items are in flight from its admission, before any wait for a caller slot
 * (`dynamodb-share.ts`), until DynamoDB Local's answer is back (or lost): that wait stands in for
 * DynamoDB Local's own queue, where a forwarded write would be in flight. The tracker also counts,
 * per item, the write attempts that named it (its "touches").
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';

/** One item, as a table and its key attributes in DynamoDB's JSON (`{ pk: { S: '…' } }`). */
export interface ItemRef {
  readonly table: string;
  readonly key: Readonly<Record<string, AttributeValue>>;
}

/** How a request names items: what the tracker needs to decide and count. */
export interface NamedItems {
  readonly kind: 'transaction' | 'write' | 'transactional-read';
  /** In the request's order (a transaction's actions, in order); `undefined` where the key is unknown. */
  readonly items: readonly (ItemRef | undefined)[];
  /** A TransactWriteItems' ClientRequestToken. */
  readonly token?: string;
}

/** What DynamoDB would answer instead of carrying the request out. */
export interface ConflictAnswer {
  readonly status: 400;
  readonly type: string;
  readonly body: Record<string, unknown>;
}

/** How often an item was named by a write attempt, by outcome. */
export interface TouchCount {
  /** Written by DynamoDB: a PutItem, UpdateItem or DeleteItem, or any action of a transaction, ConditionCheck included. */
  readonly writes: number;
  /** Named in a write attempt that wrote nothing: a cancelled or failed transaction, a refused or failed plain write. */
  readonly failed: number;
}

export interface TouchReportEntry extends TouchCount {
  readonly table: string;
  /**
   * The key, as plain values (`{ pk: 'WALLET#…' }`); a number that a JavaScript number cannot hold
   * exactly (a pet id of int64) as its decimal string.
   */
  readonly key: Record<string, unknown>;
}

/**
 * A key's number as a number when that is exact, else its decimal string: unmarshall's default
 * throws past 2^53, and a report that threw answered nothing at all (the e2e run's tests of the
 * hot wallet met a closed connection once a test had stored a pet of id 2^63 − 1).
 */
const exactNumber = (value: string): number | string =>
  String(Number(value)) === value ? Number(value) : value;

/** The reason DynamoDB gives an action that conflicts with one in flight. */
const CONFLICT_REASON = { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' };

/** The canonical identity of an item: its table and key attributes, sorted, in DynamoDB's JSON. */
export function itemId(item: ItemRef): string {
  const key = Object.keys(item.key)
    .sort()
    .map((name) => [name, canonical(item.key[name])]);
  return JSON.stringify([item.table, key]);
}

/** The same identity from a table name and a key in plain values (`{ pk: 'WALLET#alice' }`). */
export function plainItemId(table: string, key: Record<string, unknown>): string {
  return itemId({ table, key: marshall(key) });
}

/** A JSON value with its object keys sorted, so that equal keys give equal identities. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((name) => [name, canonical((value as Record<string, unknown>)[name])]),
  );
}

interface InFlight {
  /**
   * Names of the item by TransactWriteItems in flight. A second transaction on it is cancelled at
   * admission, so this exceeds 1 only when one transaction names the item twice; counted per name
   * so that release undoes exactly what admission added.
   */
  transactions: number;
  /** PutItem, UpdateItem, DeleteItem in flight on it: these do not conflict with each other. */
  writes: number;
}

/** A request admitted by the tracker: release it once DynamoDB's answer is back (or lost). */
export interface Admission {
  release(outcome: { readonly applied: boolean }): void;
}

/** How long DynamoDB answers a ClientRequestToken's transaction again without applying it. */
const TOKEN_IDEMPOTENCY_MS = 10 * 60_000;

export class ConflictTracker {
  readonly #inFlight = new Map<string, InFlight>();
  readonly #tokens = new Set<string>();
  /** Tokens whose transaction was applied, and when: in that order, so the oldest go first. */
  readonly #appliedTokens = new Map<string, number>();
  readonly #touches = new Map<string, { ref: ItemRef; writes: number; failed: number }>();

  /**
   * Admits `request` (registering its items as in flight) or says what DynamoDB would answer
   * instead; reads that never conflict are admitted without registering anything. Synchronous, so
   * that no other request is decided between the check and the registration.
   */
  admit(request: NamedItems): Admission | ConflictAnswer {
    const known = request.items.filter((item): item is ItemRef => item !== undefined);
    const ids = known.map(itemId);
    if (request.kind === 'transaction') {
      // Not a touch: the items are held once, by the token's transaction, counted when it ends. A
      // caller waiting for it asks again every 250 ms: counted, those asks added "failed" touches
      // to the hot-wallet budgets on a loaded machine while contending with nothing.
      if (request.token !== undefined && this.#tokens.has(request.token)) {
        return {
          status: 400,
          type: 'TransactionInProgressException',
          body: { message: 'Transaction with the given request token is already in progress.' },
        };
      }
      const conflicting = request.items.map((item) => item !== undefined && this.#busy(itemId(item), 'any'));
      if (conflicting.some(Boolean)) {
        this.count(request, false);
        return cancellation(conflicting);
      }
      for (const id of ids) this.#entry(id).transactions++;
      if (request.token !== undefined) this.#tokens.add(request.token);
      return this.#admission(request, ids, 'transactions');
    }
    if (request.kind === 'write') {
      if (ids.some((id) => this.#busy(id, 'transactions'))) {
        this.count(request, false);
        return {
          status: 400,
          type: 'TransactionConflictException',
          body: { message: CONFLICT_REASON.Message },
        };
      }
      for (const id of ids) this.#entry(id).writes++;
      return this.#admission(request, ids, 'writes');
    }
    // A TransactGetItems: cancelled by a write in flight on one of its items, never registered.
    const conflicting = request.items.map((item) => item !== undefined && this.#busy(itemId(item), 'any'));
    if (conflicting.some(Boolean)) return cancellation(conflicting);
    return { release: () => undefined };
  }

  /** Counts `request`'s items as touched: written when DynamoDB applied it, failed otherwise. */
  count(request: NamedItems, applied: boolean): void {
    if (request.kind === 'transactional-read') return;
    for (const ref of request.items) {
      if (ref === undefined) continue;
      const id = itemId(ref);
      let touched = this.#touches.get(id);
      if (touched === undefined) {
        touched = { ref, writes: 0, failed: 0 };
        this.#touches.set(id, touched);
      }
      if (applied) touched.writes++;
      else touched.failed++;
    }
  }

  /** How often the item `key` of `table` (plain values, e.g. `{ pk: 'WALLET#alice' }`) was touched. */
  touches(table: string, key: Record<string, unknown>): TouchCount {
    const touched = this.#touches.get(plainItemId(table, key));
    return { writes: touched?.writes ?? 0, failed: touched?.failed ?? 0 };
  }

  /** Every touched item, the most touched first. */
  touchReport(): TouchReportEntry[] {
    return [...this.#touches.values()]
      .map(({ ref, writes, failed }) => ({
        table: ref.table,
        key: unmarshall(ref.key as Record<string, AttributeValue>, { wrapNumbers: exactNumber }),
        writes,
        failed,
      }))
      .sort((a, b) => b.writes + b.failed - (a.writes + a.failed));
  }

  /** Forgets every touch (not what is in flight). */
  resetTouches(): void {
    this.#touches.clear();
  }

  /** Items in flight now: none once every request was answered (what the tests check). */
  inFlight(): number {
    return this.#inFlight.size;
  }

  #busy(id: string, by: 'any' | 'transactions'): boolean {
    const entry = this.#inFlight.get(id);
    if (entry === undefined) return false;
    return entry.transactions > 0 || (by === 'any' && entry.writes > 0);
  }

  #entry(id: string): InFlight {
    let entry = this.#inFlight.get(id);
    if (entry === undefined) {
      entry = { transactions: 0, writes: 0 };
      this.#inFlight.set(id, entry);
    }
    return entry;
  }

  /** Whether `token`'s transaction is applied for the first time within DynamoDB's window. */
  #firstApplied(token: string): boolean {
    const now = Date.now();
    for (const [known, at] of this.#appliedTokens) {
      if (now - at < TOKEN_IDEMPOTENCY_MS) break;
      this.#appliedTokens.delete(known);
    }
    if (this.#appliedTokens.has(token)) return false;
    this.#appliedTokens.set(token, now);
    return true;
  }

  #admission(request: NamedItems, ids: readonly string[], as: keyof InFlight): Admission {
    let released = false;
    return {
      release: ({ applied }) => {
        if (released) return;
        released = true;
        for (const id of ids) {
          const entry = this.#entry(id);
          entry[as]--;
          if (entry.transactions === 0 && entry.writes === 0) this.#inFlight.delete(id);
        }
        if (request.token !== undefined) this.#tokens.delete(request.token);
        // The same token sent again after its transaction committed (the SDK's retry past its
        // request timeout) is answered its outcome and applies nothing: not a second write.
        if (applied && request.token !== undefined && !this.#firstApplied(request.token)) return;
        this.count(request, applied);
      },
    };
  }
}

/**
 * The TransactionCanceledException DynamoDB answers, one reason per action in order. Its message
 * lists the codes as DynamoDB's does; the SDK reads `Message` and `CancellationReasons` from it.
 */
export function cancellation(
  conflicting: readonly boolean[],
  reason: { Code: string; Message: string } = CONFLICT_REASON,
): ConflictAnswer {
  const reasons = conflicting.map((conflict) => (conflict ? reason : { Code: 'None' }));
  return {
    status: 400,
    type: 'TransactionCanceledException',
    body: {
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      CancellationReasons: reasons,
    },
  };
}

export const isConflictAnswer = (value: Admission | ConflictAnswer): value is ConflictAnswer =>
  'status' in value;
