import { describe, expect, it } from 'vitest';
import { transferPageJson } from '#functions/list-transfers/page-json.ts';
import { moneyJson } from '#shared/wallet/money.ts';
import type { HistoryItem, TransferPage } from '#shared/wallet/transfer-history.ts';

const USD = { code: 'USD', decimals: 2 };
const JPY = { code: 'JPY', decimals: 0 };

/** The object form the page had before it was written out: the reference the text must match. */
const objectForm = (page: TransferPage, currency: typeof USD) =>
  JSON.stringify({
    items: page.items.map((item) => ({
      transferId: item.transferId,
      direction: item.direction,
      kind: item.kind,
      ...(item.counterparty === undefined ? {} : { counterparty: item.counterparty }),
      amount: moneyJson(item.amountMinor, currency),
      currency: item.currency,
      createdAt: item.createdAt,
      balanceAfter: moneyJson(item.balanceAfterMinor, currency),
    })),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  });

const item = (overrides: Partial<HistoryItem>): HistoryItem => ({
  transferId: 'a1b2',
  direction: 'out',
  kind: 'transfer',
  counterparty: 'bob',
  amountMinor: 1230,
  currency: 'USD',
  createdAt: '2026-11-24T10:00:00.000Z',
  balanceAfterMinor: 5n,
  ...overrides,
});

describe('the history page as JSON text', () => {
  const pages: [string, TransferPage][] = [
    ['an empty page, no cursor', { items: [] }],
    [
      'a deposit (no counterparty), a transfer, a cursor',
      {
        items: [item({ kind: 'deposit', direction: 'in', counterparty: undefined }), item({})],
        nextCursor: 'WzIsInQxIiwiYWJjIl0',
      },
    ],
    [
      'negative and huge balances, strings that need escaping',
      {
        items: [
          item({ balanceAfterMinor: -7n, counterparty: 'quote"back\\slash\u2028line\u0000nul' }),
          item({ balanceAfterMinor: 2n ** 70n, amountMinor: 1 }),
        ],
      },
    ],
  ];

  it.each(pages)('is the object form, byte for byte, exact amounts included: %s', (_, page) => {
    expect(transferPageJson(page, USD)).toBe(objectForm(page, USD));
    expect(transferPageJson(page, JPY)).toBe(objectForm(page, JPY));
    expect(() => JSON.parse(transferPageJson(page, USD))).not.toThrow();
  });

  it('writes amounts as exact decimal numbers with every decimal place', () => {
    const text = transferPageJson(
      { items: [item({ amountMinor: 1230, balanceAfterMinor: 2n ** 70n })] },
      USD,
    );
    expect(text).toContain('"amount":12.30,');
    expect(text).toContain(
      `"balanceAfter":${String(2n ** 70n).slice(0, -2)}.${String(2n ** 70n).slice(-2)}}`,
    );
  });
});
