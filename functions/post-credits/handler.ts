import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { creditOfItem } from '#shared/wallet/dynamodb/credit-reader.ts';
import { createCreditStore } from '#shared/wallet/dynamodb/credit-store.ts';
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
 * whole batches: shared/wallet/hot-wallet/post-credit-batches.ts). Powertools' batch utility builds
 * the partial batch response (ReportBatchItemFailures) from the record handler's answers: a wallet
 * whose posting failed fails its first record, so the stream delivers again from there, and the
 * postings that did commit are skipped, as every credit is posted on condition that it was not. A
 * record that is not a credit is skipped; a malformed credit record fails, so that bounded retries
 * send it to the failure destination.
 */
export function createPostCreditsHandler(access: WalletTableAccess) {
  const postCredits = makePostCredits({ ledger: createCreditStore(access), clock: systemClock });
  const metrics = routeMetrics('post-credits');
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    // A wallet's credits are posted together, in one call: the records of one wallet share it.
    const byWallet = new Map<string, StreamedCredit[]>();
    for (const record of event.Records) {
      const credit = creditOf(record);
      if (credit && credit !== 'malformed') {
        byWallet.set(credit.address, [...(byWallet.get(credit.address) ?? []), credit]);
      }
    }
    let posted = 0;
    let failures = 0;
    const postings = new Map<string, Promise<boolean>>();
    /** Posts a wallet's credits of this batch once, however many of its records ask: whether it all went. */
    const postingOf = (address: string, credits: StreamedCredit[]) => {
      let posting = postings.get(address);
      if (!posting) {
        posting = postCredits(
          address,
          credits.map((c) => c.credit),
        ).then(
          (outcome) => {
            posted += outcome.posted;
            return true;
          },
          (error: unknown) => {
            // Cut short: what it did post before it stopped is posted (and skipped when delivered again).
            const cutShort = error instanceof PostingCutShort ? error : undefined;
            posted += cutShort?.posted ?? 0;
            failures++;
            logger.error('Posting failed; the stream delivers the credits again', {
              errorName: ((cutShort?.cause ?? error) as Error | undefined)?.name,
              credits: credits.length,
            });
            return false;
          },
        );
        postings.set(address, posting);
      }
      return posting;
    };
    const recordHandler = async (record: DynamoDBRecord): Promise<void> => {
      const credit = creditOf(record);
      if (credit === 'malformed') {
        failures++;
        logger.error('A credit record without its transfer or recipient', { eventID: record.eventID });
        throw new MalformedCreditRecordError(record.eventID);
      }
      if (!credit) return;
      const credits = byWallet.get(credit.address) ?? [];
      const went = await postingOf(credit.address, credits);
      // The stream delivers again from the first record it is handed back: the wallet's first is enough.
      if (!went && credits[0]?.sequenceNumber === credit.sequenceNumber) {
        throw new PostingNotDoneError(credit.address);
      }
    };
    const response = await processPartialResponse(
      event,
      recordHandler,
      new BatchProcessor(EventType.DynamoDBStreams),
      {
        // A whole batch that failed is handed back as one, like any other, rather than thrown.
        throwOnFullBatchFailure: false,
      },
    );
    publish(metrics, [
      ['CreditsPosted', posted],
      ['PostingFailures', failures],
    ]);
    return { batchItemFailures: response.batchItemFailures };
  };
}

/** A credit record without its transfer, accounts, amount, time or sequence number. */
class MalformedCreditRecordError extends Error {
  constructor(eventID: string | undefined) {
    super(`Malformed credit record ${eventID ?? ''}`);
    this.name = 'MalformedCreditRecordError';
  }
}

/** A wallet's posting did not complete: its first record goes back to the stream. */
class PostingNotDoneError extends Error {
  constructor(address: string) {
    super(`Posting to ${address} did not complete`);
    this.name = 'PostingNotDoneError';
  }
}

/** The credit poster: reads the wallets table's stream, posts the credits in transit in batches. */
export const handler = createPostCreditsHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  tableName: requireEnv(tables.wallets.envVar),
});
