import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import type { Currency } from '#shared/wallet/model/money.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { createEventStore } from '#shared/webhooks/dynamodb/event-store.ts';
import {
  createTransferMatching,
  factOfItem,
  factsOfBatchPosting,
} from '#shared/webhooks/dynamodb/ledger-facts.ts';
import { createSubscriberStore } from '#shared/webhooks/dynamodb/subscribers.ts';
import { makeDeriveEvents } from '#shared/webhooks/events/derive-events.ts';
import type { LedgerFact } from '#shared/webhooks/model/ledger-fact.ts';

export interface DeriveEventsHandlerDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly walletsTable: string;
  readonly webhooksTable: string;
  readonly currency: Currency;
  /** For tests: see DeriveEventsDependencies. */
  readonly commitWithinMs?: number;
}

/** A number as the ledger wrote it: a bigint beyond 2^53 (a balance), never a rounded one. */
function exactNumber(text: string): number | bigint {
  const value = Number(text);
  return Number.isSafeInteger(value) || !/^-?\d+$/.test(text) ? value : BigInt(text);
}

/**
 * The facts of a record: an inserted entry's or transfer's, a batch posting's entries; `'malformed'`
 * for an entry, transfer or batch missing the fields of its kind.
 */
function factsOf(record: DynamoDBRecord): readonly LedgerFact[] | 'malformed' {
  const image = record.dynamodb?.NewImage;
  if (!image) return [];
  const item = unmarshall(image as Record<string, AttributeValue>, { wrapNumbers: exactNumber });
  if (record.eventName === 'MODIFY' && item.kind === 'batch') return factsOfBatchPosting(item);
  if (record.eventName !== 'INSERT') return [];
  const fact = factOfItem(item);
  return fact === undefined ? [] : fact === 'malformed' ? fact : [fact];
}

/**
 * The composition root of the deriver: the wallets table's stream in (inserted entries and
 * transfers, and batch postings, filtered by the mapping), each fact's events stored once in the
 * webhooks table with a delivery task per subscribed endpoint. The first record whose events could not be stored, or
 * that is malformed, is handed back (ReportBatchItemFailures): the stream delivers again from
 * there, what was stored is found stored and skipped, and a record that keeps failing goes to the
 * mapping's failure destination after its retries (docs/decisions/webhooks.md).
 */
export function createDeriveEventsHandler({
  client,
  walletsTable,
  webhooksTable,
  currency,
  commitWithinMs,
}: DeriveEventsHandlerDependencies) {
  const derive = makeDeriveEvents({
    events: createEventStore({ client, tableName: webhooksTable }),
    endpoints: createSubscriberStore({ client, tableName: webhooksTable }),
    transfers: createTransferMatching({ client, tableName: walletsTable }),
    currency,
    ...(commitWithinMs === undefined ? {} : { commitWithinMs }),
  });
  const metrics = routeMetrics('derive-events');
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const facts: LedgerFact[] = [];
    /** The position in the batch of each fact. */
    const positions: number[] = [];
    let malformedAt: number | undefined;
    event.Records.forEach((record, position) => {
      const found = factsOf(record);
      if (found === 'malformed') {
        logger.error('A ledger record without the fields of its kind', { eventID: record.eventID });
        malformedAt ??= position;
        return;
      }
      for (const fact of found) {
        facts.push(fact);
        positions.push(position);
      }
    });
    // Every good record is derived, those after a bad one too: handed back from the first failure,
    // the batch is retried from there, and what was stored is found stored. A malformed record
    // keeps failing, and its retries end at the failure destination without holding the others.
    const result = await derive(facts);
    const storeFailedAt = result.failedFrom === undefined ? undefined : positions[result.failedFrom];
    const first = Math.min(
      malformedAt ?? Number.POSITIVE_INFINITY,
      storeFailedAt ?? Number.POSITIVE_INFINITY,
    );
    const failedRecord = Number.isFinite(first) ? event.Records[first] : undefined;
    const failedAt = failedRecord && (failedRecord.dynamodb?.SequenceNumber ?? failedRecord.eventID ?? '');
    if (result.failedFrom !== undefined) logger.error('Events not stored; the stream delivers them again');
    publish(metrics, [
      ['EventsDerived', result.recorded],
      ['DeliveryTasksCreated', result.tasks],
      ['DerivingFailures', failedAt === undefined ? 0 : 1],
    ]);
    return { batchItemFailures: failedAt === undefined ? [] : [{ itemIdentifier: failedAt }] };
  };
}

/** The deriver: reads the wallets table's stream, stores each wallet's events for the webhooks. */
export const handler = createDeriveEventsHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  walletsTable: requireEnv(tables.wallets.envVar),
  webhooksTable: requireEnv(tables.webhooks.envVar),
  currency: loadWalletSettings().currency,
});
