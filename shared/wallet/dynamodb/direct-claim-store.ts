import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { logger } from '../../observability/telemetry.ts';
import type { DirectClaimStore, DirectCreditClaim } from '../hot-wallet/ports.ts';
import { directClaimKey } from './keys.ts';
import type { WalletTableAccess } from './table-access.ts';

/** How long a claim item outlives its last use before DynamoDB TTL deletes it: a day. */
const CLAIM_KEPT_SECONDS = 86_400;

/**
 * Claims the direct credit of `address` for the payment `claimId`: one UpdateItem of the wallet's
 * claim item, an item of its own, sent beside the payment's read. It answers the claim it replaced,
 * so that of payments arriving together only the first may write the wallet
 * (`mayCreditDirectly` in ../hot-wallet/router.ts). Never throws: a claim not written leaves the payment
 * to the clearing account.
 */
function createDirectCreditClaim({ client, tableName }: WalletTableAccess) {
  return async function claimDirectCredit(
    address: string,
    claimId: string,
    now: number,
  ): Promise<DirectCreditClaim | undefined> {
    try {
      const { Attributes: before } = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: directClaimKey(address) },
          UpdateExpression: 'SET kind = :kind, claimId = :id, claimedAt = :now, expiresAt = :expires',
          ExpressionAttributeValues: {
            ':kind': 'direct-claim',
            ':id': claimId,
            ':now': now,
            ':expires': Math.floor(now / 1000) + CLAIM_KEPT_SECONDS,
          },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return typeof before?.claimId === 'string'
        ? { previous: { claimId: before.claimId, claimedAt: Number(before.claimedAt) } }
        : {};
    } catch (error) {
      logger.warn('The direct-credit claim was not written; the payment goes through the clearing account', {
        errorName: (error as Error | undefined)?.name,
      });
      return undefined;
    }
  };
}

/**
 * Withdraws the claim `claimId` of a payment that wrote nothing, on condition that it is still the
 * last: the claim it replaced comes back, or, with none, it is left stale. Never throws: a claim
 * not withdrawn holds the wallet only until it is stale.
 */
function createDirectCreditRelease({ client, tableName }: WalletTableAccess) {
  return async function releaseDirectCredit(
    address: string,
    claimId: string,
    { previous }: DirectCreditClaim,
  ): Promise<void> {
    try {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: directClaimKey(address) },
          UpdateExpression: 'SET claimId = :previous, claimedAt = :previousAt',
          ConditionExpression: 'claimId = :mine',
          ExpressionAttributeValues: {
            ':mine': claimId,
            ':previous': previous?.claimId ?? claimId,
            ':previousAt': previous?.claimedAt ?? 0,
          },
        }),
      );
    } catch (error) {
      if ((error as Error | undefined)?.name !== 'ConditionalCheckFailedException') {
        logger.warn('The direct-credit claim was not withdrawn', {
          errorName: (error as Error | undefined)?.name,
        });
      }
    }
  };
}

/** The recipients' direct-credit claims on the wallets table: what the hot-wallet router needs. */
export const createDirectClaimStore = (access: WalletTableAccess): DirectClaimStore => ({
  claimDirectCredit: createDirectCreditClaim(access),
  releaseDirectCredit: createDirectCreditRelease(access),
});
