import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import { skeleton } from '../../schemas/confusable-skeleton.ts';
import { skeletonKey, walletKey } from './keys.ts';
import type { WalletTableAccess } from './table-access.ts';

/**
 * Whether a wallet is open at the address now: `lookalike` when another wallet holds its UTS #39
 * skeleton (the address looks like that wallet's), and none opens there.
 */
export type OpeningOutcome = 'open' | 'lookalike';

/**
 * The claim on an address's skeleton, as a transaction item: written on condition that no other
 * wallet holds it (the address's own, from an opening whose answer was lost, may). Every
 * transaction that opens a wallet carries it (here, and a deposit's, ./deposit-store.ts).
 */
export function skeletonClaim(tableName: string, address: string) {
  return {
    Put: {
      TableName: tableName,
      Item: { pk: skeletonKey(skeleton(address)), kind: 'skeleton', address, skeleton: skeleton(address) },
      ConditionExpression: 'attribute_not_exists(pk) OR address = :address',
      ExpressionAttributeValues: { ':address': address },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    },
  };
}

/**
 * Opens an empty wallet at `address` unless one is open already (then nothing changes): from then
 * on the address can receive money. One transaction, once per address: the wallet, on condition
 * that none is open there, and its skeleton's claim. A module of its own: the balance opens a
 * wallet, and its bundle carries no code that moves money.
 */
export function createWalletOpening({ client, tableName }: WalletTableAccess) {
  return async function openWallet(address: string, openedAt: string): Promise<OpeningOutcome> {
    try {
      await withRetries(() =>
        client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: tableName,
                  Item: { pk: walletKey(address), kind: 'wallet', balance: 0, seq: 0, openedAt },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              skeletonClaim(tableName, address),
            ],
          }),
        ),
      );
      return 'open';
    } catch (error) {
      if ((error as Error | undefined)?.name !== 'TransactionCanceledException') throw error;
      const [wallet, claim] =
        (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      // Opened meanwhile (a deposit, or another request of the owner): open is all we wanted.
      if (wallet?.Code === 'ConditionalCheckFailed') return 'open';
      if (claim?.Code === 'ConditionalCheckFailed') return 'lookalike';
      throw error;
    }
  };
}
