/**
 * What the route table does not say about each operation's contract: bodies, parameters, the
 * problem types its function can answer with, the headers of its answers and an example of each.
 * `shared/openapi.ts` assembles the document from this, the route table and the error tables.
 */

import { IDEMPOTENCY_KEY_DESCRIPTION, idempotencyKeyParameter } from './http/idempotency-key.ts';
import { type OperationContract, pageParameters } from './openapi-contract.ts';
import { ALICE, BOB } from './openapi-examples.ts';
import { petOperationContracts } from './openapi-pet-operations.ts';
import { webhookOperationContracts } from './openapi-webhook-operations.ts';
import type { OperationId } from './routes.ts';
import { MAX_CURSOR_LENGTH as HISTORY_CURSOR_LENGTH } from './wallet/history/history-cursor.ts';

export const operationContracts: Record<OperationId, OperationContract> = {
  ...petOperationContracts,
  ...webhookOperationContracts,
  getBalance: {
    tag: 'wallet',
    success: {
      status: 200,
      schema: 'Balance',
      description:
        "The caller's wallet: `balance` is what it can spend, `pending` what was paid to it and is still being posted (a wallet that many pay at once is credited in batches, usually within a second). Both are read at one moment: each payment is counted in exactly one of them, so `balance + pending` is what was paid in, never a credit twice. The first call opens it (at 0): from then on it can receive money; transfers to an address with no open wallet are refused (unknown-recipient). An address that looks like another wallet's (the same UTS #39 confusable skeleton, e.g. Cyrillic `расе7` beside `pace7`) gets no wallet: 409 lookalike-address",
      example: {
        address: ALICE,
        balance: 12.5,
        pending: 3,
        currency: 'USD',
        updatedAt: '2026-01-02T03:04:05.678Z',
      },
    },
    problems: ['lookalike-address', 'temporarily-unavailable'],
  },
  sendMoney: {
    tag: 'wallet',
    requestBody: 'SendRequest',
    requestExample: { toAddress: BOB, amount: 12.34 },
    success: {
      status: 200,
      schema: 'Transfer',
      description:
        "The transfer (or, for a replayed Idempotency-Key, the original one, with its status now). The payer's balance is debited either way. `completed`: the recipient's available balance holds the money. `pending`: the recipient is a wallet that many pay at once, and the credit is posted to it in a batch, usually within a second; the transfer then reads `completed`. The recipient must have an open wallet (422 unknown-recipient otherwise), and its balance stays within the most a wallet holds (422 recipient-balance-limit)",
      headers: [{ name: 'Idempotent-Replayed', required: false }],
      example: {
        transferId: '3f1c2a6e-8d4b-4c7e-9a51-2b7d9e0f6a13',
        fromAddress: ALICE,
        toAddress: BOB,
        amount: 12.34,
        currency: 'USD',
        status: 'completed',
        createdAt: '2026-01-02T03:04:05.678Z',
      },
    },
    problems: [
      'malformed-body',
      'invalid-parameter',
      'unsupported-media-type',
      'validation-failed',
      'insufficient-funds',
      'unknown-recipient',
      'recipient-balance-limit',
      'idempotency-key-reused',
      'temporarily-unavailable',
    ],
    parameters: [idempotencyKeyParameter(IDEMPOTENCY_KEY_DESCRIPTION, 'b5e0c8f2-transfer-42')],
  },
  listTransfers: {
    tag: 'wallet',
    success: {
      status: 200,
      schema: 'TransferHistoryPage',
      description:
        'Your transfers and deposits, newest first, each with the balance after it and its status (`pending` while a payment of yours is being posted to a wallet that many pay at once). The first page also lists, in `pending`, payments to you not yet posted to your balance. Pass nextCursor as cursor for the next page; a page continues below the last one, so movements arriving meanwhile never shift or repeat items',
      example: {
        pending: [
          {
            transferId: '5d2e4f6a-7b8c-4d9e-8f0a-1b2c3d4e5f60',
            counterparty: BOB,
            amount: 3,
            currency: 'USD',
            createdAt: '2026-01-02T03:04:06.000Z',
            status: 'pending',
          },
        ],
        items: [
          {
            transferId: '3f1c2a6e-8d4b-4c7e-9a51-2b7d9e0f6a13',
            direction: 'out',
            kind: 'transfer',
            counterparty: BOB,
            amount: 12.34,
            currency: 'USD',
            createdAt: '2026-01-02T03:04:05.678Z',
            balanceAfter: 87.66,
            status: 'completed',
          },
          {
            transferId: '9a7b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
            direction: 'in',
            kind: 'deposit',
            amount: 100,
            currency: 'USD',
            createdAt: '2026-01-01T00:00:00.000Z',
            balanceAfter: 100,
            status: 'completed',
          },
        ],
      },
    },
    problems: ['invalid-parameter', 'temporarily-unavailable'],
    parameters: pageParameters('Transfers', {
      maxLength: HISTORY_CURSOR_LENGTH,
      description:
        "The previous page's nextCursor; another caller's, or one edited to name another transfer, is a 400",
    }),
  },
  getTransfer: {
    tag: 'wallet',
    success: {
      status: 200,
      schema: 'TransferDetails',
      description:
        'The transfer or deposit, with its status now: `pending` while its credit is being posted to a wallet that many pay at once, then `completed`',
      example: {
        transferId: '3f1c2a6e-8d4b-4c7e-9a51-2b7d9e0f6a13',
        kind: 'transfer',
        fromAddress: ALICE,
        toAddress: BOB,
        amount: 12.34,
        currency: 'USD',
        status: 'completed',
        createdAt: '2026-01-02T03:04:05.678Z',
      },
    },
    problems: ['not-found', 'temporarily-unavailable'],
    parameters: [
      {
        name: 'transferId',
        in: 'path',
        required: true,
        schema: { type: 'string', maxLength: 64 },
        description: 'The id a transfer or a history item names; 404 unless you are one of its two parties',
      },
    ],
  },
  getOpenApi: {
    tag: 'reference',
    success: { status: 200, description: 'This OpenAPI 3.1 document', example: { openapi: '3.1.0' } },
    problems: [],
  },
  getApiDocs: {
    tag: 'reference',
    success: {
      status: 200,
      description: 'The reference page',
      mediaTypes: ['text/html'],
      example: '<!doctype html>',
    },
    problems: [],
  },
  getApiDocsAsset: {
    tag: 'reference',
    success: {
      status: 200,
      description: 'The asset; its name carries a hash of its content',
      mediaTypes: ['text/javascript', 'text/css'],
      example: '/* asset */',
    },
    problems: ['not-found'],
    parameters: [
      {
        name: 'asset',
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: '^[a-z-]+\\.[0-9a-f]{16}\\.(js|css)$', maxLength: 64 },
        description: 'File name of the asset, as the page links it',
        example: 'swagger-ui.0123456789abcdef.css',
      },
    ],
  },
};
