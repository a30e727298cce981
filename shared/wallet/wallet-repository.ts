import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { MAX_BALANCE_MINOR } from './money.ts';

/*
 * Single-table layout (partition key `pk` only):
 *   WALLET#<address>           balance (minor units), updatedAt         mutable, one per address;
 *                              exists once the wallet is open: money is only ever sent to one
 *   TRANSFER#<transferId>      the transfer, immutable, kept forever    written once, conditionally
 *   DEPOSIT#<depositId>        a funding credit, immutable              written once, conditionally
 *   IDEMPOTENCY#["sub","key"]  the transfer the key made               expiresAt (DynamoDB TTL)
 */
const walletKey = (address: string) => `WALLET#${address}`;
const transferKey = (transferId: string) => `TRANSFER#${transferId}`;
const depositKey = (depositId: string) => `DEPOSIT#${depositId}`;
// JSON keeps (sub, key) unambiguous whatever characters either holds.
const idempotencyKey = (sub: string, key: string) => `IDEMPOTENCY#${JSON.stringify([sub, key])}`;

/** A wallet as stored. */
export interface WalletRecord {
  /** Exact whatever its size: balances are capped at {@link MAX_BALANCE_MINOR}, but older data may not be. */
  readonly balanceMinor: bigint;
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
  /** The sender's balance does not cover the amount; the sender may have had no wallet at all. */
  | { readonly kind: 'insufficient-funds'; readonly senderHasWallet: boolean }
  /** No wallet is open at the recipient's address. */
  | { readonly kind: 'unknown-recipient' }
  /** The credit would take the recipient's balance past {@link MAX_BALANCE_MINOR}. */
  | { readonly kind: 'recipient-limit' }
  /** The key was used before: the transfer it made. */
  | { readonly kind: 'key-used'; readonly transfer: TransferRecord };

/** A funding credit from outside the system, immutable once recorded. */
export interface DepositRecord {
  readonly depositId: string;
  readonly address: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly createdAt: string;
}

export type DepositOutcome =
  | { readonly kind: 'recorded' }
  /** A deposit with this id was recorded before (a re-run): this is it, and nothing moved again. */
  | { readonly kind: 'already-recorded'; readonly deposit: DepositRecord }
  /** The credit would take the balance past {@link MAX_BALANCE_MINOR}; nothing changed. */
  | { readonly kind: 'balance-limit' };

type CancellationReason = { Code?: string; Item?: Record<string, AttributeValue> };

function cancellationReasons(error: unknown): CancellationReason[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  return (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons;
}

/** Where the wallet ledger lives: one DocumentClient per container, and the table's physical name. */
export interface WalletTableAccess {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** The wallet ledger on its DynamoDB table: every read and write the wallet use cases make. */
export type WalletRepository = ReturnType<typeof createWalletRepository>;

/** The repository over one table, through one client: built once by a composition root. */
export function createWalletRepository({ client, tableName }: WalletTableAccess) {
  /** Reads a wallet with a strongly consistent read; `undefined` for an address with no open wallet. */
  async function readWallet(address: string): Promise<WalletRecord | undefined> {
    const { Item } = await withRetries(() =>
      client.send(
        new GetCommand({ TableName: tableName, Key: { pk: walletKey(address) }, ConsistentRead: true }),
      ),
    );
    return Item
      ? {
          // Exact at any size: the DocumentClient reads an integer beyond 2^53 as a bigint (no
          // wrapNumbers needed), a smaller one as an exact number; a balance stored before the cap
          // existed may be that large.
          balanceMinor: BigInt(Item.balance as number | bigint),
          updatedAt: Item.updatedAt as string | undefined,
        }
      : undefined;
  }

  /**
   * Opens an empty wallet at `address` unless one is open already (then nothing changes): from
   * then on the address can receive money. One conditional write, once per address.
   */
  async function openWallet(address: string, openedAt: string): Promise<void> {
    try {
      await withRetries(() =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: walletKey(address), kind: 'wallet', balance: 0, openedAt },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
    } catch (error) {
      // Opened meanwhile (a deposit, or another request of the owner): open is all we wanted.
      if ((error as Error | undefined)?.name !== 'ConditionalCheckFailedException') throw error;
    }
  }

  /**
   * Moves money in ONE TransactWriteItems, with no read before it: debit the sender on condition
   * that the balance covers the amount, credit the recipient on condition that its wallet is open
   * and stays within {@link MAX_BALANCE_MINOR}, write the immutable transfer record, and, with an
   * Idempotency-Key, claim the key in the same transaction, which is what makes a repeated request
   * move money once, even when both arrive together.
   *
   * The ClientRequestToken is the transfer's id, so a retry of a commit whose response was lost is a
   * no-op; our bounded retries (conflicts, throttling, timeouts, network errors) resend the very same
   * input. A later request with the same key is a new transaction, stopped by the key's record.
   */
  async function commitTransfer(transfer: TransferRecord, claim?: IdempotencyClaim): Promise<CommitOutcome> {
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
            // Tells a sender with no wallet (nothing returned) from one with too little.
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          Update: {
            TableName: tableName,
            Key: { pk: walletKey(transfer.toAddress) },
            UpdateExpression: 'ADD balance :amount SET updatedAt = :now',
            // Money only goes where its owner can spend it, and never past the cap.
            ConditionExpression: 'attribute_exists(pk) AND balance <= :room',
            ExpressionAttributeValues: {
              ':amount': transfer.amountMinor,
              ':room': MAX_BALANCE_MINOR - transfer.amountMinor,
              ':now': now,
            },
            // Tells an unknown recipient (nothing returned) from one at the cap.
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
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
        // The sender's balance first: a caller who cannot pay learns nothing about the recipient.
        if (reasons[0]?.Code === 'ConditionalCheckFailed') {
          return { kind: 'insufficient-funds', senderHasWallet: reasons[0].Item !== undefined };
        }
        if (reasons[1]?.Code === 'ConditionalCheckFailed') {
          return reasons[1].Item ? { kind: 'recipient-limit' } : { kind: 'unknown-recipient' };
        }
      }
      throw error;
    }
  }

  /**
   * Credits a wallet from outside the system (funding, which opens the wallet if need be) and
   * records the deposit, atomically and once per deposit id: the deposit record is written on
   * condition that the id is new, so re-running a funding that did commit changes nothing and
   * returns the deposit recorded first. No ClientRequestToken: a re-run is a new request (another
   * `createdAt`), which the token would refuse as a parameter mismatch instead of answering.
   * Balances are read with {@link readWallet}.
   */
  async function recordDeposit(deposit: DepositRecord): Promise<DepositOutcome> {
    if (!Number.isSafeInteger(deposit.amountMinor) || deposit.amountMinor > MAX_BALANCE_MINOR) {
      return { kind: 'balance-limit' };
    }
    try {
      await withRetries(() =>
        client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tableName,
                  Key: { pk: walletKey(deposit.address) },
                  UpdateExpression: 'ADD balance :amount SET updatedAt = :now',
                  ConditionExpression: 'attribute_not_exists(balance) OR balance <= :room',
                  ExpressionAttributeValues: {
                    ':amount': deposit.amountMinor,
                    ':room': MAX_BALANCE_MINOR - deposit.amountMinor,
                    ':now': deposit.createdAt,
                  },
                },
              },
              {
                Put: {
                  TableName: tableName,
                  Item: { pk: depositKey(deposit.depositId), kind: 'deposit', ...deposit },
                  ConditionExpression: 'attribute_not_exists(pk)',
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                },
              },
            ],
          }),
        ),
      );
      return { kind: 'recorded' };
    } catch (error) {
      const reasons = cancellationReasons(error);
      const recorded = reasons?.[1];
      if (recorded?.Code === 'ConditionalCheckFailed' && recorded.Item) {
        const { depositId, address, amountMinor, currency, createdAt } = unmarshall(recorded.Item);
        return {
          kind: 'already-recorded',
          deposit: { depositId, address, amountMinor, currency, createdAt },
        };
      }
      if (reasons?.[0]?.Code === 'ConditionalCheckFailed') return { kind: 'balance-limit' };
      throw error;
    }
  }

  return { readWallet, openWallet, commitTransfer, recordDeposit };
}
