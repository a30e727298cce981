/**
 * What a recipient matches a payment on (issue 46): the payer's `reference` (an order or invoice
 * id) and free `metadata` pairs, stored on the transfer as sent. Bounds live in the send request's
 * schema (shared/schemas/wallet.ts); here only how they travel.
 */
export interface Matching {
  readonly reference?: string | undefined;
  readonly metadata?: Readonly<Record<string, string>> | undefined;
}

/** A movement's `reference` and `metadata` as answered: each only when it has one. */
export const matchingOf = ({ reference, metadata }: Matching): Matching => ({
  ...(reference === undefined ? {} : { reference }),
  ...(metadata === undefined ? {} : { metadata }),
});
