import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import { AUDIT_RETRY_POLICY } from './key-reader.ts';
import { auditedProjection, type Item } from './records.ts';

/**
 * Items per Scan page: bounds what is in flight (one page of at most SCAN_PAGE_ITEMS projected
 * items per segment) and how long one request takes, well inside the client's request timeout
 * (REQUEST_TIMEOUT_MS). Read units are charged by bytes, not requests, so smaller pages cost
 * nothing more (what DynamoDB Local measured: docs/decisions/double-entry-ledger.md).
 */
const SCAN_PAGE_ITEMS = 1_000;

/**
 * Every item of the table, `segments` Scan segments in parallel, strongly consistent; or only
 * those of one segment of several (a child of a segmented audit).
 */
export async function scanTable(
  client: DynamoDBDocumentClient,
  tableName: string,
  segments: number | { readonly segment: number; readonly of: number },
  file: (item: Item) => void,
): Promise<void> {
  const [first, count, total] =
    typeof segments === 'number' ? [0, segments, segments] : [segments.segment, 1, segments.of];
  await Promise.all(
    Array.from({ length: count }, async (_, n) => {
      const segment = first + n;
      let ExclusiveStartKey: Item | undefined;
      do {
        const page = await withRetries(
          () =>
            client.send(
              new ScanCommand({
                TableName: tableName,
                Segment: segment,
                TotalSegments: total,
                ConsistentRead: true,
                Limit: SCAN_PAGE_ITEMS,
                ExclusiveStartKey,
                ...auditedProjection,
              }),
            ),
          AUDIT_RETRY_POLICY,
        );
        for (const item of page.Items ?? []) file(item);
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
    }),
  );
}
