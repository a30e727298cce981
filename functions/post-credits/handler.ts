import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { createCreditStore, creditOfItem } from '#shared/wallet/dynamodb/credit-store.ts';
import type { WalletTableAccess } from '#shared/wallet/dynamodb/table-access.ts';
import type { CreditInTransit } from '#shared/wallet/hot-wallet/credit-batch.ts';
import { makePostCredits, PostingCutShort } from '#shared/wallet/hot-wallet/post-credits.ts';
import { systemClock } from '#shared/wallet/model/ports.ts';

/** A credit in transit as a stream record announces it, with the record's position. */
interface StreamedCredit {
  readonly address: string;
  readonly credit: CreditInTransit;
  readonly sequenceNumber: string;
}

/**
 * The credit a record announces: an inserted CREDIT# item; `'malformed'` for one without its
 * transfer, accounts, amount, time or sequence number; `undefined` for any other record.
 */
function creditOf(record: DynamoDBRecord): StreamedCredit | 'malformed' | undefined {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || image?.kind?.S !== 'credit') return undefined;
  const announced = creditOfItem(unmarshall(image as Record<string, AttributeValue>));
  const sequenceNumber = record.dynamodb?.SequenceNumber;
  return announced && sequenceNumber ? { ...announced, sequenceNumber } : 'malformed';
}

/**
 * The composition root of the credit poster: the DynamoDB stream of the wallets table in, the
 * credits in transit posted to their wallets, one posting call per wallet, the wallets in parallel;
 * a call posts a few credits in one transaction, and more on two levels (batches, then postings of
 * whole batches: shared/wallet/hot-wallet/post-credit-batches.ts). A wallet
 * whose posting failed hands its first record back (ReportBatchItemFailures): the stream delivers
 * again from there, and the postings that did commit are skipped, as every credit is posted on
 * condition that it was not. A record that is not a credit is skipped; a malformed credit record
 * is reported failed, so that bounded retries send it to the failure destination.
 */
export function createPostCreditsHandler(access: WalletTableAccess) {
  const postCredits = makePostCredits({ ledger: createCreditStore(access), clock: systemClock });
  const metrics = routeMetrics('post-credits');
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const byWallet = new Map<string, StreamedCredit[]>();
    const failed: string[] = [];
    for (const record of event.Records) {
      const credit = creditOf(record);
      if (credit === 'malformed') {
        logger.error('A credit record without its transfer or recipient', { eventID: record.eventID });
        failed.push(record.dynamodb?.SequenceNumber ?? record.eventID ?? '');
      } else if (credit) byWallet.set(credit.address, [...(byWallet.get(credit.address) ?? []), credit]);
    }
    let posted = 0;
    const outcomes = await Promise.allSettled(
      [...byWallet].map(([address, credits]) =>
        postCredits(
          address,
          credits.map((c) => c.credit),
        ),
      ),
    );
    [...byWallet.values()].forEach((credits, i) => {
      const outcome = outcomes[i];
      if (outcome?.status === 'fulfilled') posted += outcome.value.posted;
      if (outcome?.status === 'rejected') {
        // Cut short: what it did post before it stopped is posted (and skipped when delivered again).
        const cutShort = outcome.reason instanceof PostingCutShort ? outcome.reason : undefined;
        posted += cutShort?.posted ?? 0;
        logger.error('Posting failed; the stream delivers the credits again', {
          errorName: ((cutShort?.cause ?? outcome.reason) as Error | undefined)?.name,
          credits: credits.length,
        });
        failed.push(credits[0]?.sequenceNumber ?? '');
      }
    });
    publish(metrics, [
      ['CreditsPosted', posted],
      ['PostingFailures', failed.length],
    ]);
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

/** The credit poster: reads the wallets table's stream, posts the credits in transit in batches. */
export const handler = createPostCreditsHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
});
