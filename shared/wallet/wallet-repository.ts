import { randomUUID } from 'node:crypto';
import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { idempotencyKey, transferKey, walletAccount, walletKey } from './ledger-keys.ts';
import {
  awaitNextVersion,
  busy,
  cancellationReasons,
  createLedgerWrites,
  stateOf,
  VERSION_DEADLINE_MS,
  type WalletTableAccess,
} from './ledger-writes.ts';
import { MAX_BALANCE_MINOR } from './money.ts';

/** A transfer as asked for and as answered: immutable once written. */
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

/** The wallet ledger on its DynamoDB table: every read and write the wallet functions make. */
export type WalletRepository = ReturnType<typeof createWalletRepository>;

/** The repository over one table, through one client: built once by a composition root. */
export function createWalletRepository({ client, tableName }: WalletTableAccess) {
  const { readMany, accountUpdate, entryPuts } = createLedgerWrites({ client, tableName });

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
            Item: { pk: walletKey(address), kind: 'wallet', balance: 0, seq: 0, openedAt },
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
   * Moves money as ONE TransactWriteItems after one strongly consistent BatchGetItem of the two
   * wallets (and the key's record): the read gives each side's running balance and next seq, the
   * transaction writes both accounts on condition that they are unchanged since, the transfer
   * record, the two entries and, with an Idempotency-Key, the key's claim, which is what makes a
   * repeated request move money once, even when both arrive together. Six items, a few kB: far
   * inside the 100-item and 4 MB limits of a transaction.
   *
   * The ClientRequestToken makes a retry of a commit whose response was lost a no-op; our bounded
   * retries resend the very same input. Another movement that changed an account in between
   * cancels the transaction: then the accounts are read again and a new transaction is built.
   */
  async function commitTransfer(transfer: TransferRecord, claim?: IdempotencyClaim): Promise<CommitOutcome> {
    const from = walletAccount(transfer.fromAddress);
    const to = walletAccount(transfer.toAddress);
    const amount = BigInt(transfer.amountMinor);
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const keys = [walletKey(transfer.fromAddress), walletKey(transfer.toAddress)];
      if (claim) keys.push(idempotencyKey(claim.sub, claim.key));
      const read = await readMany(keys);
      const claimed = claim && read.get(idempotencyKey(claim.sub, claim.key));
      if (claimed && (claimed.expiresAt as number) >= Math.floor(Date.parse(transfer.createdAt) / 1000)) {
        const original = claimed.transfer as TransferRecord;
        return original.transferId === transfer.transferId
          ? { kind: 'committed' }
          : { kind: 'key-used', transfer: original };
      }
      const sender = stateOf(read.get(walletKey(transfer.fromAddress)));
      const recipient = stateOf(read.get(walletKey(transfer.toAddress)));
      // The sender's balance first: a caller who cannot pay learns nothing about the recipient.
      if (!sender.exists || sender.balance < amount) {
        return { kind: 'insufficient-funds', senderHasWallet: sender.exists };
      }
      if (!recipient.exists) return { kind: 'unknown-recipient' };
      if (recipient.balance + amount > BigInt(MAX_BALANCE_MINOR)) return { kind: 'recipient-limit' };

      // A transaction may take up to 6.5 s (worstCaseCallMs): started later than this, it could
      // outlast the function's 10 s timeout. Nothing is written yet, so a 503 is safe to retry.
      if (Date.now() - started > VERSION_DEADLINE_MS) throw busy('The wallets are busy; retry the request');
      const now = transfer.createdAt;
      const record = {
        pk: transferKey(transfer.transferId),
        kind: 'transfer',
        transferKind: 'transfer',
        ...transfer,
        fromSeq: sender.seq + 1,
        toSeq: recipient.seq + 1,
      };
      const input = {
        // A fresh token per version: DynamoDB refuses a token reused with other parameters.
        ClientRequestToken: attempt === 1 ? transfer.transferId : randomUUID(),
        TransactItems: [
          accountUpdate(from, sender, -amount, now),
          accountUpdate(to, recipient, amount, now),
          {
            Put: {
              TableName: tableName,
              Item: record,
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          ...entryPuts(
            { ...transfer, transferKind: 'transfer' },
            { account: from, state: sender },
            { account: to, state: recipient },
          ),
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
                    // An expired record may linger until TTL deletes it: the key is free all the same.
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
        if (!reasons) throw error;
        const keyReason = reasons[5];
        if (claim && keyReason?.Code === 'ConditionalCheckFailed' && keyReason.Item) {
          // Cancellation reasons come as DynamoDB sees them: the DocumentClient does not translate errors.
          const original = unmarshall(keyReason.Item).transfer as TransferRecord;
          if (original.transferId !== transfer.transferId) return { kind: 'key-used', transfer: original };
          return { kind: 'committed' };
        }
        // Our own transfer id exists only if an earlier attempt of this very call committed.
        if (reasons[2]?.Code === 'ConditionalCheckFailed') return { kind: 'committed' };
        await awaitNextVersion(reasons, error, {
          attempt,
          started,
          message: 'The wallets are busy; retry the request',
        });
      }
    }
  }

  return { openWallet, commitTransfer };
}
export type { WalletTableAccess } from './ledger-writes.ts';
// Deposits (funding from outside the system) are ./deposit-ledger.ts, made by the operator's
// `wallet:fund` only; reading a wallet is ./wallet-reader.ts, for the balance and `wallet:fund`.
// Each function bundle thus carries only the ledger code its route runs.
