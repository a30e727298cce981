import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import { eachLimited } from '../../util/each-limited.ts';
import type { WalletTableAccess } from './table-access.ts';
import { skeletonClaim } from './wallet-opening.ts';

/** Claims in flight at once: a one-off pass over a table, not a load test of it. */
const CLAIMS_AT_ONCE = 8;

export interface SkeletonClaimsReport {
  readonly wallets: number;
  /** Wallets whose skeleton is theirs now (claimed by this pass, or before it). */
  readonly held: number;
  /** Wallets whose skeleton an older wallet holds: opened before the claims, and looking like it. */
  readonly lookalikes: readonly { readonly address: string; readonly holder: string }[];
}

/**
 * Gives the wallets of a table opened before skeletons were claimed (issue 45.4) their claims: one
 * Scan of the wallets, then each one's claim, oldest wallet first, so that of two lookalikes the
 * one opened first keeps its skeleton. Safe to run again, and beside live traffic: a claim is the
 * same conditional Put an opening makes. The wallets it names as lookalikes stay open (they may
 * hold money); the ledger audit names them too, until an operator settles each pair.
 */
export async function claimSkeletons({
  client,
  tableName,
}: WalletTableAccess): Promise<SkeletonClaimsReport> {
  const wallets: { address: string; openedAt: string }[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await withRetries(() =>
      client.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: 'begins_with(pk, :wallet)',
          ProjectionExpression: 'pk, openedAt',
          ExpressionAttributeValues: { ':wallet': 'WALLET#' },
          ConsistentRead: true,
          ExclusiveStartKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) {
      wallets.push({
        address: (item.pk as string).slice('WALLET#'.length),
        openedAt: String(item.openedAt ?? ''),
      });
    }
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  wallets.sort((a, b) => a.openedAt.localeCompare(b.openedAt) || a.address.localeCompare(b.address));

  // In order of opening within each skeleton: claims of one skeleton must not race each other.
  const bySkeleton = new Map<string, string[]>();
  for (const { address } of wallets) {
    const key = skeletonClaim(tableName, address).Put.Item.pk;
    bySkeleton.set(key, [...(bySkeleton.get(key) ?? []), address]);
  }
  let held = 0;
  const lookalikes: { address: string; holder: string }[] = [];
  await eachLimited([...bySkeleton.values()], CLAIMS_AT_ONCE, async (addresses) => {
    for (const address of addresses) {
      const holder = await claim(address);
      if (holder === address) held++;
      else lookalikes.push({ address, holder });
    }
  });
  return { wallets: wallets.length, held, lookalikes };

  /** The address that holds `address`'s skeleton once its claim was tried. */
  async function claim(address: string): Promise<string> {
    const { Put } = skeletonClaim(tableName, address);
    try {
      await withRetries(() => client.send(new PutCommand(Put)));
      return address;
    } catch (error) {
      if ((error as Error | undefined)?.name !== 'ConditionalCheckFailedException') throw error;
      const item = (error as { Item?: { address?: { S?: string } } }).Item;
      return item?.address?.S ?? '(unknown)';
    }
  }
}
