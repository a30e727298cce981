import type { FromSchema } from 'json-schema-to-ts';
import { MAX_AMOUNT_TEXT_LENGTH, MAX_BALANCE_MINOR } from '../wallet/money.ts';

/** An address is the `sub` of the token that owns the wallet. */
const addressSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  // C0 and C1 control characters and DEL: invisible in logs and UIs, so never part of an address.
  pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F]+$',
} as const;

/** An amount at the edge: an exact decimal in the currency's major unit (its precision is checked on the raw JSON text). */
const amountSchema = {
  type: 'number',
  description: `Amount in the major unit of the currency, with at most its number of decimals (e.g. 12.34 USD), written in at most ${MAX_AMOUNT_TEXT_LENGTH} characters of JSON number text, and at most the per-transfer maximum of the deployment`,
  exclusiveMinimum: 0,
} as const;

/** Body of `POST /api/wallet/send`. */
export const sendRequestSchema = {
  $id: 'SendRequest',
  type: 'object',
  additionalProperties: false,
  required: ['toAddress', 'amount'],
  properties: { toAddress: addressSchema, amount: amountSchema },
} as const;

export type SendRequest = FromSchema<typeof sendRequestSchema>;

/** Response of `GET /api/wallet/balance`. */
export const balanceSchema = {
  $id: 'Balance',
  type: 'object',
  additionalProperties: false,
  required: ['address', 'balance', 'currency'],
  properties: {
    address: addressSchema,
    balance: {
      type: 'number',
      description: `Exact decimal in the major unit of the currency. A wallet holds at most ${MAX_BALANCE_MINOR} minor units (10000000000000.00 in a 2-decimal currency such as USD), well inside 2^53 so that no count of minor units is ever rounded; a transfer or deposit that would pass it is refused`,
    },
    currency: { type: 'string', description: 'ISO 4217 code' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;

export type Balance = FromSchema<typeof balanceSchema>;

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
    status: { type: 'string', enum: ['completed'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export type Transfer = FromSchema<typeof transferSchema>;
