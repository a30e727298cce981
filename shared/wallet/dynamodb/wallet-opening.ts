import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import { walletKey } from './keys.ts';
import type { WalletTableAccess } from './table-access.ts';

/**
 * Opens an empty wallet at `address` unless one is open already (then nothing changes): from then
 * on the address can receive money. One conditional write, once per address. A module of its own:
 * the balance opens a wallet, and its bundle carries no code that moves money.
 */
export function createWalletOpening({ client, tableName }: WalletTableAccess) {
  return async function openWallet(address: string, openedAt: string): Promise<void> {
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
  };
}
