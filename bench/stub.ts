/**
 * The stand-in for DynamoDB in the in-process benchmark: `send` of the SDK's `Client` answers at
 * once with a plausible output, so that what is timed is the function's own code.
 */
import { fullPet } from './workload.ts';

/** The global symbol under which the instrumented bundles register their SDK `Client` classes. */
export const SMITHY_CLIENTS = 'wallet-catalog.bench.smithy-clients';

const METADATA = { httpStatusCode: 200, requestId: 'BENCH0REQUEST0ID', attempts: 1, totalRetryDelay: 0 };
const PET_ITEM = fullPet(2 ** 52 + 1);
const WALLET_ITEM = { pk: 'WALLET#bench', balance: 1_234_567, updatedAt: '2025-06-01T12:00:00.000Z' };

/** How many commands the stub answered; the benchmark checks the round trips per request with it. */
export const stubCalls = { count: 0 };

interface Sendable {
  readonly input?: { readonly Key?: Record<string, unknown> };
}

/**
 * What DynamoDB would answer through the DocumentClient: an item for a GetItem (a pet for the pets
 * table's `id` key, a wallet for the wallets table's `pk`), only metadata for writes.
 */
function stubSend(command: Sendable): Promise<unknown> {
  stubCalls.count++;
  const key = command.input?.Key;
  if (key?.id !== undefined) return Promise.resolve({ Item: PET_ITEM, $metadata: METADATA });
  if (key?.pk !== undefined) return Promise.resolve({ Item: WALLET_ITEM, $metadata: METADATA });
  return Promise.resolve({ $metadata: METADATA });
}

/**
 * Replaces `send` of every SDK `Client` class the loaded instrumented bundles registered; returns
 * how many there were. DynamoDBDocumentClient inherits `send` from `Client`, so its calls land here
 * with the DocumentClient's own command (native JavaScript input, nothing marshalled yet).
 */
export function stubSdkSend(): number {
  const registry = (globalThis as Record<symbol, unknown>)[Symbol.for(SMITHY_CLIENTS)];
  const classes = Array.isArray(registry) ? (registry as { prototype: { send: unknown } }[]) : [];
  for (const Client of classes) Client.prototype.send = stubSend;
  return classes.length;
}
