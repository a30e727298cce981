import type { FromSchema } from 'json-schema-to-ts';
import { MAX_AMOUNT_TEXT_LENGTH, MAX_BALANCE_MINOR } from '../wallet/model/money.ts';

/**
 * An address is the `sub` of the token that owns the wallet: the one rule for `toAddress`, for the
 * addresses of responses and, through the generated `validateAddress`, for the `sub` the
 * authorizer accepts. What two people see as the same address must be the same string, so an
 * address follows a published identifier profile (`x-identifier-profile`, compiled by
 * `scripts/ajv-instance.ts` from `identifier-profile.ts`): RFC 8265's UsernameCasePreserved
 * (PRECIS IdentifierClass: letters, marks and digits, ASCII punctuation; nothing invisible, no
 * white space, no compatibility form such as fullwidth), with the restriction level Highly
 * Restrictive of UTS #39 (no Latin mixed with Cyrillic or Greek). docs/decisions/address-profile.md
 * gives the reasons and the limits. One keyword, so a refused address gets one violation; its
 * `description` says the rule to readers of the document. Refusing unassigned code points keeps
 * NFC stable when Unicode grows (its stability policy). `maxLength` counts code points, as JSON
 * Schema does, each at most 4 bytes of UTF-8, so an address is at most 1,024 bytes and its
 * DynamoDB key `WALLET#<address>` below the 2,048 bytes of a partition key.
 */
const addressSchema = {
  type: 'string',
  description:
    "The owner's token sub: an identifier under RFC 8265's UsernameCasePreserved profile (PRECIS IdentifierClass: letters, marks and digits of any script and ASCII punctuation, in NFC; no white space, no symbol beyond ASCII, nothing invisible or default-ignorable, no compatibility form such as fullwidth) and UTS #39's restriction level Highly Restrictive (one script, or Latin with Han and kana, Bopomofo or Hangul)",
  minLength: 1,
  maxLength: 256,
  'x-identifier-profile': 'PRECIS-UsernameCasePreserved+UTS39-HighlyRestrictive',
} as const;

/** A wallet address alone: compiled into `validateAddress`, which the authorizer checks `sub` with. */
export const addressOnlySchema = { $id: 'Address', ...addressSchema } as const;

/**
 * An amount asked for: a JSON number. Its value (greater than 0, precision, size, length of its
 * text) is decided once, on the JSON text as sent, by `parseAmount` in the send function's edge:
 * the parsed body holds a float, which cannot tell `0.1` from `0.10000000000000001`.
 */
export const requestedAmountSchema = {
  type: 'number',
  description: `Amount in the major unit of the currency, greater than 0, with at most its number of decimals (e.g. 12.34 USD), written in at most ${MAX_AMOUNT_TEXT_LENGTH} characters of JSON number text, and at most the per-transfer maximum of the deployment`,
} as const;

/** An amount answered: an exact decimal in the currency's major unit. */
const amountSchema = {
  type: 'number',
  description: 'Amount in the major unit of the currency, exact (e.g. 12.34 USD)',
  exclusiveMinimum: 0,
} as const;

/** Body of `POST /api/wallet/send`. */
export const sendRequestSchema = {
  $id: 'SendRequest',
  type: 'object',
  additionalProperties: false,
  required: ['toAddress', 'amount'],
  properties: { toAddress: addressSchema, amount: requestedAmountSchema },
} as const;

export type SendRequest = FromSchema<typeof sendRequestSchema>;

/** Response of `GET /api/wallet/balance`. */
export const balanceSchema = {
  $id: 'Balance',
  type: 'object',
  additionalProperties: false,
  required: ['address', 'balance', 'pending', 'currency'],
  properties: {
    address: addressSchema,
    balance: {
      type: 'number',
      description: `The available balance: posted money, all of it spendable. Exact decimal in the major unit of the currency. A wallet holds at most ${MAX_BALANCE_MINOR} minor units (10000000000000.00 in a 2-decimal currency such as USD), well inside 2^53 so that no count of minor units is ever rounded; a transfer or deposit that would pass it is refused`,
    },
    pending: {
      type: 'number',
      minimum: 0,
      description:
        'Paid to this wallet and not yet posted: a wallet that many pay at once is credited in batches, usually within a second. Not spendable until posted; exact decimal. `balance` and `pending` are one moment of the ledger: a payment is in one of them, never both, so `balance + pending` is never more than was paid to the wallet, and includes every payment answered before this read was asked (on AWS, give the index of credits in transit its propagation delay, well under a second)',
    },
    currency: { type: 'string', description: 'ISO 4217 code' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;

export type Balance = FromSchema<typeof balanceSchema>;

/** Whether the money has reached the recipient's available balance. */
const transferStatusSchema = {
  type: 'string',
  enum: ['pending', 'completed'],
  description:
    "`completed`: the recipient's available balance holds the money. `pending`: the payer has paid (its balance is debited) and the credit is in transit to a wallet that many pay at once; it becomes `completed` when posted, usually within a second",
} as const;

/** Response of `POST /api/wallet/send`. */
export const transferSchema = {
  $id: 'Transfer',
  type: 'object',
  additionalProperties: false,
  required: ['transferId', 'fromAddress', 'toAddress', 'amount', 'currency', 'status', 'createdAt'],
  properties: {
    transferId: { type: 'string' },
    fromAddress: addressSchema,
    toAddress: addressSchema,
    amount: amountSchema,
    currency: { type: 'string' },
    status: transferStatusSchema,
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export type Transfer = FromSchema<typeof transferSchema>;

/** The exact balance of a wallet after a movement. */
const balanceAfterSchema = {
  type: 'number',
  description:
    "The wallet's balance just after this movement, exact decimal in the major unit of the currency",
} as const;

/** The kinds of movement: a transfer between two wallets, or a deposit (wallet:fund) from outside. */
const movementKindSchema = { type: 'string', enum: ['transfer', 'deposit'] } as const;

/** One line of `GET /api/wallet/transfers`. */
const transferHistoryItemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['transferId', 'direction', 'kind', 'amount', 'currency', 'createdAt', 'balanceAfter', 'status'],
  properties: {
    transferId: {
      type: 'string',
      description: 'Looks the movement up at /api/wallet/transfers/{transferId}',
    },
    direction: { type: 'string', enum: ['in', 'out'], description: 'Money into or out of your wallet' },
    kind: movementKindSchema,
    counterparty: { ...addressSchema, description: 'The other wallet of a transfer; absent for a deposit' },
    amount: amountSchema,
    currency: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    balanceAfter: balanceAfterSchema,
    status: transferStatusSchema,
  },
} as const;

/** A credit paid to the caller's wallet and not yet posted: listed on the first page of its history. */
const pendingCreditSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['transferId', 'counterparty', 'amount', 'currency', 'createdAt', 'status'],
  properties: {
    transferId: { type: 'string' },
    counterparty: { ...addressSchema, description: 'The paying wallet' },
    amount: amountSchema,
    currency: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: ['pending'] },
  },
} as const;

/** Response of `GET /api/wallet/transfers`. */
export const transferHistoryPageSchema = {
  $id: 'TransferHistoryPage',
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: { type: 'array', maxItems: 100, items: transferHistoryItemSchema },
    pending: {
      type: 'array',
      maxItems: 100,
      items: pendingCreditSchema,
      description:
        'First page only, when there are any: credits paid to your wallet and not yet posted to it, newest first (at most `limit`)',
    },
    nextCursor: {
      type: 'string',
      maxLength: 200,
      description:
        'Pass as `cursor` for the next (older) page; absent on the last page. A page may hold fewer than `limit` items, even none, and still have one: it ends before a movement just made that is not readable everywhere yet, and the next page starts there',
    },
  },
} as const;

export type TransferHistoryPage = FromSchema<typeof transferHistoryPageSchema>;

/** Response of `GET /api/wallet/transfers/{transferId}`: the transfer as `POST /api/wallet/send` answers it, or a deposit. */
export const transferDetailsSchema = {
  $id: 'TransferDetails',
  type: 'object',
  additionalProperties: false,
  required: ['transferId', 'kind', 'toAddress', 'amount', 'currency', 'status', 'createdAt'],
  properties: {
    ...transferSchema.properties,
    kind: movementKindSchema,
    fromAddress: { ...addressSchema, description: 'The paying wallet; absent for a deposit' },
  },
} as const;

export type TransferDetails = FromSchema<typeof transferDetailsSchema>;
