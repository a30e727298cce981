/**
 * The facts the deriver reads from the wallets table's stream: inserted entries of wallets and
 * inserted transfer records (layout: shared/wallet/dynamodb/keys.ts). This adapter is the one
 * place the events half knows the ledger's item layout.
 */
import { readItems } from '../../wallet/dynamodb/consistent-read.ts';
import { accountOfEntryItem, transferKey } from '../../wallet/dynamodb/keys.ts';
import type { WalletTableAccess } from '../../wallet/dynamodb/table-access.ts';
import { addressOfAccount } from '../../wallet/model/accounts.ts';
import type { Matching } from '../../wallet/model/matching.ts';
import type { TransferMatchingStore } from '../events/ports.ts';
import type { EntryFact, LedgerFact, TransferFact } from '../model/ledger-fact.ts';

/**
 * The Lambda event filter of the deriver's mapping: inserted entries and transfer records only.
 * Exact values, which is all the local stream poller's matcher knows; other items (wallets,
 * credits, claims, markers) and every MODIFY never reach the function, nor are they billed.
 */
export const EVENT_SOURCE_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { kind: { S: ['entry', 'transfer'] } } },
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
