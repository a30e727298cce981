import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { requireEnv } from '../config.ts';
import { createDocumentClient } from '../dynamodb/client.ts';
import { withRetries } from '../dynamodb/retry.ts';
import { tables } from '../dynamodb/tables.ts';

const client = createDocumentClient();
const tableName = requireEnv(tables.wallets.envVar);

/*
 * Single-table layout (partition key `pk` only):
 *   WALLET#<address>           balance (minor units), updatedAt         mutable, one per address
 *   TRANSFER#<transferId>      the transfer, immutable, kept forever    written once, conditionally
 *   DEPOSIT#<depositId>        a funding credit, immutable              written once, conditionally
 *   IDEMPOTENCY#["sub","key"]  request hash + the original transfer     expiresAt (DynamoDB TTL)
 */
const walletKey = (address: string) => `WALLET#${address}`;
const transferKey = (transferId: string) => `TRANSFER#${transferId}`;
const depositKey = (depositId: string) => `DEPOSIT#${depositId}`;
// JSON keeps (sub, key) unambiguous whatever characters either holds.
const idempotencyKey = (sub: string, key: string) => `IDEMPOTENCY#${JSON.stringify([sub, key])}`;

/** A wallet as stored. */
export interface WalletRecord {
  readonly balanceMinor: number;
  readonly updatedAt?: string;
}

/** A transfer as stored: immutable once written. */
export interface TransferRecord {
  readonly transferId: string;
  readonly fromAddress: string;
  readonly toAddress: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
}

/** An Idempotency-Key claimed by the transaction that uses it. */
export interface IdempotencyClaim {
  readonly sub: string;
  readonly key: string;
  /** Epoch seconds after which DynamoDB TTL may delete the record and the key is free again. */
  readonly expiresAt: number;
}

export type CommitOutcome =
  | { readonly kind: 'committed' }
  | { readonly kind: 'insufficient-funds' }
  /** The key was used before: the transfer it made. */
  | { readonly kind: 'key-used'; readonly transfer: TransferRecord };

/** Reads a wallet with a strongly consistent read; `undefined` for an address never credited. */
export async function readWallet(address: string): Promise<WalletRecord | undefined> {
  const { Item } = await withRetries(() =>
    client.send(
      new GetCommand({ TableName: tableName, Key: { pk: walletKey(address) }, ConsistentRead: true }),
    ),
  );
  return Item
    ? { balanceMinor: Item.balance as number, updatedAt: Item.updatedAt as string | undefined }
    : undefined;
}

/**
 * Moves money in ONE TransactWriteItems, with no read before it: debit the sender on condition
 * that the balance covers the amount, credit the recipient (creating its wallet if new), write the
 * immutable transfer record, and, with an Idempotency-Key, claim the key in the same transaction,
 * which is what makes a repeated request move money once, even when both arrive together.
 *
 * The ClientRequestToken is the transfer's id, so a retry of a commit whose response was lost is a
 * no-op; our bounded retries (conflicts, throttling, timeouts, network errors) resend the very same
 * input. A later request with the same key is a new transaction, stopped by the key's record.
 */
export async function commitTransfer(
  transfer: TransferRecord,
  claim?: IdempotencyClaim,
): Promise<CommitOutcome> {
  const now = transfer.createdAt;
  const input: TransactWriteCommandInput = {
    ClientRequestToken: transfer.transferId,
    TransactItems: [
      {
        Update: {
          TableName: tableName,
          Key: { pk: walletKey(transfer.fromAddress) },
          UpdateExpression: 'SET balance = balance - :amount, updatedAt = :now',
          ConditionExpression: 'balance >= :amount',
          ExpressionAttributeValues: { ':amount': transfer.amountMinor, ':now': now },
        },
      },
      {
        Update: {
          TableName: tableName,
          Key: { pk: walletKey(transfer.toAddress) },
          UpdateExpression: 'ADD balance :amount SET updatedAt = :now',
          ExpressionAttributeValues: { ':amount': transfer.amountMinor, ':now': now },
        },
      },
      {
        Put: {
          TableName: tableName,
          Item: { pk: transferKey(transfer.transferId), kind: 'transfer', ...transfer },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      ...(claim
        ? [
            {
              Put: {
                TableName: tableName,
                Item: {
                  pk: idempotencyKey(claim.sub, claim.key),
                  kind: 'idempotency',
                  transfer,
                  expiresAt: claim.expiresAt,
                },
                // An expired record that TTL has not swept yet frees the key all the same.
                ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowEpoch',
                ExpressionAttributeValues: { ':nowEpoch': Math.floor(Date.parse(now) / 1000) },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
              },
            },
          ]
        : []),
    ],
  };

  try {
    await withRetries(() => client.send(new TransactWriteCommand(input)));
    return { kind: 'committed' };
  } catch (error) {
    const reasons = cancellationReasons(error);
    if (reasons) {
      const keyReason = reasons[3];
      if (claim && keyReason?.Code === 'ConditionalCheckFailed' && keyReason.Item) {
        // Cancellation reasons come as DynamoDB sees them: the DocumentClient does not translate errors.
        return { kind: 'key-used', transfer: unmarshall(keyReason.Item).transfer as TransferRecord };
      }
      // Our own transfer id exists only if an earlier attempt of this very call committed.
      if (reasons[2]?.Code === 'ConditionalCheckFailed') return { kind: 'committed' };
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return { kind: 'insufficient-funds' };
    }
    throw error;
  }
}

type CancellationReason = { Code?: string; Item?: Record<string, AttributeValue> };

function cancellationReasons(error: unknown): CancellationReason[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  return (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons;
}

/**
 * Credits a wallet from outside the system (funding) and records the deposit, atomically.
 * Returns nothing: balances are read with {@link readWallet}.
 */
export async function recordDeposit(deposit: {
  depositId: string;
  address: string;
  amountMinor: number;
  currency: string;
  createdAt: string;
}): Promise<void> {
  await withRetries(() =>
    client.send(
      new TransactWriteCommand({
        ClientRequestToken: deposit.depositId,
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: { pk: walletKey(deposit.address) },
              UpdateExpression: 'ADD balance :amount SET updatedAt = :now',
              ExpressionAttributeValues: { ':amount': deposit.amountMinor, ':now': deposit.createdAt },
            },
          },
          {
            Put: {
              TableName: tableName,
              Item: { pk: depositKey(deposit.depositId), kind: 'deposit', ...deposit },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    ),
  );
}
