/**
 * The facts the deriver reads from the wallets table's stream: inserted entries of wallets,
 * inserted transfer records, and the entries a batch's posting gives (layout:
 * shared/wallet/dynamodb/keys.ts). This adapter is the one
 * place the events half knows the ledger's item layout.
 */
import { entriesOfBatch } from '../../wallet/dynamodb/batch-items.ts';
import { batchOfItem } from '../../wallet/dynamodb/batch-reader.ts';
import { readItems } from '../../wallet/dynamodb/consistent-read.ts';
import { accountOfEntryItem, entryItem, transferKey } from '../../wallet/dynamodb/keys.ts';
import type { WalletTableAccess } from '../../wallet/dynamodb/table-access.ts';
import { addressOfAccount } from '../../wallet/model/accounts.ts';
import type { Matching } from '../../wallet/model/matching.ts';
import type { TransferMatchingStore } from '../events/ports.ts';
import type { EntryFact, LedgerFact, TransferFact } from '../model/ledger-fact.ts';

/**
 * The Lambda event filter of the deriver's mapping: entries, transfer records and credit batches.
 * Exact values, which is all the local stream poller's matcher knows; other items (wallets,
 * credits, claims, markers) never reach the function, nor are they billed. Entries and transfer
 * records are written once (INSERT); a batch is written three times, put, posted and completed,
 * and the deriver takes its posting (MODIFY) alone ({@link factsOfBatchPosting}).
 */
export const EVENT_SOURCE_FILTER = {
  eventName: ['INSERT', 'MODIFY'],
  dynamodb: { NewImage: { kind: { S: ['entry', 'transfer', 'batch'] } } },
} as const;

const isString = (value: unknown): value is string => typeof value === 'string';
const isCount = (value: unknown): value is number => Number.isSafeInteger(value);

function matchingOfItem(item: Record<string, unknown>): Matching {
  return {
    ...(isString(item.reference) ? { reference: item.reference } : {}),
    ...(typeof item.metadata === 'object' && item.metadata !== null
      ? { metadata: item.metadata as Record<string, string> }
      : {}),
  };
}

/**
 * The fact an inserted item states: an entry of a wallet, or a transfer between two wallets;
 * `undefined` for anything else (the issuance account's entries, deposits' records, other kinds);
 * `'malformed'` for an entry or transfer without the fields every one of them has.
 */
export function factOfItem(item: Record<string, unknown>): LedgerFact | 'malformed' | undefined {
  if (item.kind === 'entry') {
    const address = addressOfAccount(accountOfEntryItem(item));
    if (address === undefined) return undefined;
    const { seq, transferId, amountMinor, currency, createdAt, direction, balanceAfter } = item;
    if (
      !isCount(seq) ||
      !isString(transferId) ||
      !isCount(amountMinor) ||
      !isString(currency) ||
      !isString(createdAt) ||
      (direction !== 'in' && direction !== 'out') ||
      (typeof balanceAfter !== 'number' && typeof balanceAfter !== 'bigint')
    ) {
      return 'malformed';
    }
    const counterparty =
      (isString(item.counterpartyAddress) ? item.counterpartyAddress : undefined) ??
      addressOfAccount(String(item.counterpartyAccount ?? ''));
    return {
      kind: 'entry',
      factKey: String(item.pk),
      address,
      seq,
      balanceAfterMinor: BigInt(balanceAfter),
      transferId,
      movement: item.transferKind === 'deposit' ? 'deposit' : 'transfer',
      direction,
      amountMinor,
      currency,
      counterparty,
      createdAt,
      postedAt: isString(item.postedAt) ? item.postedAt : undefined,
      viaClearing: item.via === 'clearing' || item.counterpartyAccount === 'CLEARING',
      ...(isString(item.batchId) ? { retold: true as const } : {}),
      ...matchingOfItem(item),
    } satisfies EntryFact;
  }
  if (item.kind === 'transfer') {
    if (item.transferKind === 'deposit') return undefined;
    const { transferId, fromAddress, toAddress, amountMinor, currency, createdAt } = item;
    if (
      !isString(transferId) ||
      !isString(fromAddress) ||
      !isString(toAddress) ||
      !isCount(amountMinor) ||
      !isString(currency) ||
      !isString(createdAt)
    ) {
      return 'malformed';
    }
    return {
      kind: 'transfer',
      transferId,
      fromAddress,
      toAddress,
      amountMinor,
      currency,
      createdAt,
      viaClearing: item.via === 'clearing',
      ...matchingOfItem(item),
    } satisfies TransferFact;
  }
  return undefined;
}

/**
 * The recipient's entries a batch's posting gives, as facts: the money is spendable from the
 * posting, whose `transfer.completed` events are told then, not at the batch's completion, which
 * writes these entries in a second transaction (at once, or minutes later by the sweep when the
 * poster stopped between the two). Derived as the completion writes them (`entriesOfBatch`), so
 * each is the fact its entry item states: one key, one event id; the completion's entries, which
 * name their batch, are then found told (`retold`). A batch item not posted, or completed, states
 * nothing new.
 */
export function factsOfBatchPosting(item: Record<string, unknown>): LedgerFact[] | 'malformed' {
  const batch = batchOfItem(item);
  if (batch === undefined) return 'malformed';
  if (batch.posting === undefined || batch.completedAt !== undefined) return [];
  const facts = entriesOfBatch(batch, batch.posting, batch.posting.postedAt).map((entry) =>
    factOfItem(entryItem(entry, true)),
  );
  return facts.every((fact): fact is LedgerFact => fact !== undefined && fact !== 'malformed')
    ? facts
    : 'malformed';
}

/** BatchGetItem takes at most 100 keys. */
const KEYS_PER_READ = 100;

/**
 * The reference and metadata of transfers, from their records: one BatchGetItem per 100, those
 * attributes only (and the key, which the read files what it finds by).
 */
export function createTransferMatching(access: WalletTableAccess): TransferMatchingStore {
  return {
    async matching(transferIds) {
      const found = new Map<string, Matching>();
      const ids = [...new Set(transferIds)];
      for (let at = 0; at < ids.length; at += KEYS_PER_READ) {
        const items = await readItems(access, ids.slice(at, at + KEYS_PER_READ).map(transferKey), {
          projection: {
            ProjectionExpression: '#pk, #id, #r, #m',
            ExpressionAttributeNames: {
              '#pk': 'pk',
              '#id': 'transferId',
              '#r': 'reference',
              '#m': 'metadata',
            },
          },
        });
        for (const item of items.values()) found.set(String(item.transferId), matchingOfItem(item));
      }
      return found;
    },
  };
}
