/** The cost model of BENCHMARKS.md: USD per million requests of each route, from a run's figures. */
import { routes as routeTable } from '#shared/routes.ts';
import { table } from './report.ts';
import type { Results } from './results.ts';
import { CALLS_BESIDE_ANOTHER, DYNAMODB_CALLS } from './workload.ts';

export const PRICES = {
  apiGatewayPerMillion: 3.5,
  lambdaRequestsPerMillion: 0.2,
  lambdaArmPerGbSecond: 0.0000133334,
  writeRequestUnitsPerMillion: 0.625,
  readRequestUnitsPerMillion: 0.125,
  logsIngestionPerGb: 0.5,
} as const;

/** DynamoDB latency per round trip from Lambda in the same region: the low and high assumption. */
const ROUND_TRIP_MS = [5, 10] as const;

/**
 * Requests each token makes within one authorizer cache period: how far the authorizer's cost is
 * amortised. 1 would be one request per token per five minutes, the worst case.
 */
const REQUESTS_PER_CACHED_POLICY = 10;

/**
 * Request units of one successful request. Every item is under 1 KB (entry ≈ 400 B, transfer ≈
 * 350 B, wallet ≈ 170 B, measured on a local ledger); transactional writes count double; a
 * consistent read of a missing item costs a unit like a found one.
 */
function capacityUnits(name: string): { wru: number; rru: number } {
  // Read: both wallets, the recipient's hot marker and the Idempotency-Key's (absent) record,
  // consistent. Write: 6 items in one transaction (2 accounts, the transfer, 2 entries, the key's
  // claim), plus the history index's copy of each entry (standard writes), and the claim of the
  // recipient's direct credit (a standard write).
  if (name === 'send-money') return { wru: 6 * 2 + 2 + 1, rru: 4 };
  // One eventually consistent Query of a full page (20 entries ≈ 8 KB, two 4 KB units at half
  // price) and the consistent read of the hot marker.
  if (name === 'list-transfers') return { wru: 0, rru: 2 };
  // The wallet and its marker; the movement and its credit: two items read, consistent.
  if (name === 'get-balance' || name === 'get-transfer') return { wru: 0, rru: 2 };
  // The pet and its two tag entries, transactional (2 WRU each), plus their copies in the status
  // and tags indexes; a delete reads the pet first.
  if (name === 'add-pet') return { wru: 3 * 2 + 3, rru: 0 };
  if (name === 'delete-pet') return { wru: 3 * 2 + 3, rru: 1 };
  // A page of 20 ids (keys only, eventually consistent: one unit), then the 20 pets, consistent.
  if (name === 'find-pets-by-status' || name === 'find-pets-by-tags') return { wru: 0, rru: 1 + 20 };
  // The event (consistent), the endpoint set (consistent), the task.
  if (name === 'redeliver-event') return { wru: 1, rru: 2 };
  const calls = DYNAMODB_CALLS[name] ?? [];
  // Otherwise items under 1 KB: a write 1 WRU, a transaction of one item (a wallet's endpoint set)
  // 2 WRU, a consistent read 1 RRU, a Query of a page (under 4 KB, eventually consistent) 1 RRU.
  return {
    wru:
      calls.filter((c) => c === 'PutItem' || c === 'UpdateItem' || c === 'DeleteItem').length +
      2 * calls.filter((c) => c === 'TransactWriteItems').length,
    rru: calls.filter((c) => c === 'GetItem' || c === 'Query').length,
  };
}

/** USD per million requests of each route, low and high DynamoDB latency; Markdown table and notes. */
export function costModel(results: Results, memoryMb: number, authorizerCacheTtlSeconds: number): string {
  const gb = memoryMb / 1024;
  const authorizer = results.warm.find((w) => w.name === 'authorizer');
  // Billed in whole milliseconds: its measured invocation, rounded up.
  const authorizerBilledMs = Math.max(1, Math.ceil((authorizer?.functionUs ?? 1000) / 1000));
  const authorizerPerMillion =
    (PRICES.lambdaRequestsPerMillion + (authorizerBilledMs / 1000) * gb * PRICES.lambdaArmPerGbSecond * 1e6) /
    REQUESTS_PER_CACHED_POLICY;
  const routes = results.warm
    .map((w) => w.name)
    .filter((name) => routeTable.some((r) => r.functionDir === name));
  const rows = routes.map((name) => {
    const warm = results.warm.find((w) => w.name === name);
    const roundTrips = (DYNAMODB_CALLS[name] ?? []).length - (CALLS_BESIDE_ANOTHER[name] ?? 0);
    const inProcessMs = (warm?.functionUs ?? 0) / 1000;
    const billed = ROUND_TRIP_MS.map((rt) => Math.max(1, Math.ceil(inProcessMs + roundTrips * rt)));
    const compute = billed.map((ms) => (ms / 1000) * gb * PRICES.lambdaArmPerGbSecond * 1e6);
    const { wru, rru } = capacityUnits(name);
    const dynamodb = wru * PRICES.writeRequestUnitsPerMillion + rru * PRICES.readRequestUnitsPerMillion;
    const logs = (((warm?.logBytesPerInvocation ?? 0) * 1e6) / 2 ** 30) * PRICES.logsIngestionPerGb;
    // Public routes (the API document and its reference page) have no authorizer in front.
    const authorized = routeTable.find((r) => r.functionDir === name)?.scopes !== null;
    const fixed =
      PRICES.apiGatewayPerMillion +
      PRICES.lambdaRequestsPerMillion +
      dynamodb +
      logs +
      (authorized ? authorizerPerMillion : 0);
    const totals = compute.map((c) => fixed + c);
    return [
      name,
      String(roundTrips),
      `${billed[0]}–${billed[1]} ms`,
      PRICES.apiGatewayPerMillion.toFixed(2),
      PRICES.lambdaRequestsPerMillion.toFixed(2),
      `${(compute[0] ?? 0).toFixed(3)}–${(compute[1] ?? 0).toFixed(3)}`,
      authorized ? authorizerPerMillion.toFixed(3) : '—',
      `${dynamodb.toFixed(3)} (${wru} WRU, ${rru} RRU)`,
      `${logs.toFixed(3)} (${Math.round(warm?.logBytesPerInvocation ?? 0)} B)`,
      `**${(totals[0] ?? 0).toFixed(2)}–${(totals[1] ?? 0).toFixed(2)}**`,
    ];
  });
  const header = [
    'Route',
    'DynamoDB calls',
    'Billed duration',
    'API Gateway',
    'Lambda requests',
    `Lambda compute (${memoryMb} MB arm64)`,
    'Authorizer (amortised)',
    'DynamoDB on-demand',
    'Logs ingested',
    'Total',
  ];
  return [
    `USD per million requests; the range is DynamoDB at ${ROUND_TRIP_MS[0]} ms and at ${ROUND_TRIP_MS[1]} ms per round trip.`,
    '',
    table(header, rows),
    '',
    `- Billed duration = measured in-process time (warm column) + DynamoDB calls × ${ROUND_TRIP_MS[0]}–${ROUND_TRIP_MS[1]} ms, rounded up to whole ms; ${memoryMb} MB from \`ProjectFunction.MEMORY_MB\`.`,
    `- Authorizer: one invocation (${authorizerBilledMs} ms billed: its measured invocation) per token per ${authorizerCacheTtlSeconds} s cache period, assuming ${REQUESTS_PER_CACHED_POLICY} requests per token in that period (worst case, 1 request: ${(authorizerPerMillion * REQUESTS_PER_CACHED_POLICY).toFixed(3)} USD per million).`,
    `- DynamoDB: items are under 1 KB; strongly consistent reads cost 1 RRU (an absent item too); a transfer reads 4 items (both wallets, the recipient's hot marker, the Idempotency-Key) in one BatchGetItem, then writes 6 items in one transaction, 2 WRU each, plus 2 history-index writes; the balance reads the wallet and its marker, a lookup the movement and its credit (2 RRU each); a history page is one eventually consistent Query of 20 entries (≈ 8 KB, 1 RRU) beside the marker's read (1 RRU).`,
    '- Logs: the request log line each function writes (measured on stdout), at CloudWatch Logs ingestion prices.',
  ].join('\n');
}
