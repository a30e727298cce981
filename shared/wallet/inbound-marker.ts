import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { logger } from '../observability/telemetry.ts';
import type { WalletTableAccess } from './ledger-commit.ts';
import { inboundKey } from './ledger-keys.ts';

/** A marker is rewritten only when it would lapse within this margin. */
const RENEW_MARGIN_MS = 5_000;

/**
 * Marks `address` hot until `until` (epoch ms): payments to it go through the clearing account.
 * The marker is an item of its own, so marking never touches the hot wallet; it is written only
 * when it would lapse soon, so a crowd of payers, or a poster posting batch after batch, does not
 * rewrite it on every payment. It never throws: see `TransferLedger.markHot`.
 */
export function createInboundMarker({ client, tableName }: WalletTableAccess) {
  return async function markHot(address: string, until: number): Promise<void> {
    try {
      await withRetries(() =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: inboundKey(address), kind: 'inbound', hotUntil: until },
            ConditionExpression: 'attribute_not_exists(pk) OR hotUntil < :renewBefore',
            ExpressionAttributeValues: { ':renewBefore': until - RENEW_MARGIN_MS },
          }),
        ),
      );
    } catch (error) {
      // Hot for long enough already; or not marked this time, which only costs a later payment
      // one try of the wallet.
      if ((error as Error | undefined)?.name !== 'ConditionalCheckFailedException') {
        logger.warn('The hot-wallet marker was not written', {
          errorName: (error as Error | undefined)?.name,
        });
      }
    }
  };
}
