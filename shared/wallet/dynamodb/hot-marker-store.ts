import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import { logger } from '../../observability/telemetry.ts';
import { recentEntries } from '../../util/recent-entries.ts';
import type { HotMarkerStore } from '../hot-wallet/ports.ts';
import { inboundKey } from './keys.ts';
import type { WalletTableAccess } from './table-access.ts';

/** A marker is rewritten only when it would lapse within this margin. */
const RENEW_MARGIN_MS = 5_000;

/** How many addresses' markers a container remembers (the hot ones: a few). */
const KNOWN_MARKERS = 1_000;

/**
 * Marks `address` hot until `until` (epoch ms): payments to it go through the clearing account.
 * The marker is an item of its own, so marking never touches the hot wallet; it is written only
 * when it would lapse soon, so a crowd of payers, or a poster posting batch after batch, does not
 * rewrite it on every payment. The container remembers until when each marker holds (from its own
 * write, or from the marker a refused write returns) and does not ask again before it would be
 * renewed: a refused conditional write still costs a write unit and a round trip. It never throws:
 * see `HotMarkerStore.markHot`. It answers until when the marker is known to hold: at least
 * `until` less RENEW_MARGIN_MS, as a marker that holds that far is left as it is, or 0 when it
 * could not be written.
 */
export function createHotMarkerStore({ client, tableName }: WalletTableAccess): HotMarkerStore {
  const markedUntil = recentEntries<number>(KNOWN_MARKERS);
  async function markHot(address: string, until: number): Promise<number> {
    const renewBefore = until - RENEW_MARGIN_MS;
    const known = markedUntil.get(address) ?? 0;
    if (known >= renewBefore) return known;
    try {
      await withRetries(() =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: inboundKey(address), kind: 'inbound', hotUntil: until },
            ConditionExpression: 'attribute_not_exists(pk) OR hotUntil < :renewBefore',
            ExpressionAttributeValues: { ':renewBefore': renewBefore },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      markedUntil.set(address, until);
      return until;
    } catch (error) {
      const refused = error as { name?: string; Item?: { hotUntil?: { N?: string } } } | undefined;
      if (refused?.name === 'ConditionalCheckFailedException') {
        // Hot for long enough already: the marker as it stands says until when.
        const hotUntil = Number(refused.Item?.hotUntil?.N);
        if (!Number.isSafeInteger(hotUntil)) return 0;
        markedUntil.set(address, hotUntil);
        return hotUntil;
      }
      // Not marked this time: a payment that needed the mark answers 503 (`makeSendMoney`), a
      // poster renews it with its next posting.
      logger.warn('The hot-wallet marker was not written', {
        errorName: (error as Error | undefined)?.name,
      });
      return 0;
    }
  }
  return { markHot };
}
