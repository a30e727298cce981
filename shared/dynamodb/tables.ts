import type { AttributeDefinition, CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { TableName } from '../routes.ts';

/** A key attribute: its name and DynamoDB type. */
export interface KeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/** A global secondary index, keyed by a partition and a sort key. */
export interface IndexDefinition {
  readonly name: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey: KeyAttribute;
  /** What it copies of an item: every attribute unless `KEYS_ONLY` (the table's and the index's keys). */
  readonly projection?: 'ALL' | 'KEYS_ONLY';
}

/** A table's key schema and settings: read by CDK and by the DynamoDB Local set-up alike. */
export interface TableDefinition {
  /** Environment variable through which a function learns the table's physical name. */
  readonly envVar: string;
  readonly partitionKey: KeyAttribute;
  /** Global secondary indexes (projection ALL), e.g. the wallet ledger's history of entries. */
  readonly indexes?: readonly IndexDefinition[];
  /**
   * The table's change stream and what its records hold (the new image): the wallet ledger's
   * credit poster reads the credits in transit from it.
   */
  readonly stream?: 'NEW_IMAGE';
  /** Attribute holding an epoch-seconds expiry that DynamoDB TTL deletes after. */
  readonly timeToLiveAttribute?: string;
  readonly description: string;
}

export const tables: Readonly<Record<TableName, TableDefinition>> = {
  pets: {
    envVar: 'PETS_TABLE_NAME',
    partitionKey: { name: 'id', type: 'N' },
    // Layout in shared/pets/pet-index.ts; why so: docs/decisions/pet-search.md. Keys only: a
    // search reads ids from an index and the pets by key, so a write that changes neither a pet's
    // status nor its tags writes no index at all.
    indexes: [
      // Pets with a status carry `statusShard` (`<status>#<0..7>`).
      {
        name: 'status',
        partitionKey: { name: 'statusShard', type: 'S' },
        sortKey: { name: 'id', type: 'N' },
        projection: 'KEYS_ONLY',
      },
      // Only tag entries carry `tag`: one per distinct tag name of a pet, written with the pet.
      {
        name: 'tags',
        partitionKey: { name: 'tag', type: 'S' },
        sortKey: { name: 'petId', type: 'N' },
        projection: 'KEYS_ONLY',
      },
    ],
    // Only the records of adds' Idempotency-Keys carry `expiresAt`.
    timeToLiveAttribute: 'expiresAt',
    description:
      "One item per pet, keyed by its int64 id (index status); one tag entry per tag name of a pet, keyed by a 38-digit id (index tags); one record per add's Idempotency-Key, keyed by a 38-digit id from 2e37 (TTL)",
  },
  wallets: {
    envVar: 'WALLETS_TABLE_NAME',
    partitionKey: { name: 'pk', type: 'S' },
    // Only entries carry `account`: the index is sparse, one item per side of a movement, but for
    // the entries the credit poster writes (below). Layout in shared/wallet/dynamodb/keys.ts.
    indexes: [
      {
        name: 'history',
        partitionKey: { name: 'account', type: 'S' },
        sortKey: { name: 'seq', type: 'N' },
      },
      // The entries the credit poster writes carry `historyShard` in place of `account`: a hot
      // wallet's history is spread over shards, so no key takes every payment to it. A batch
      // posted and not completed is there too, standing for its credits' entries.
      {
        name: 'history-shards',
        partitionKey: { name: 'historyShard', type: 'S' },
        sortKey: { name: 'seq', type: 'N' },
      },
      // Only credits in transit and batches of them carry `pendingFor` (removed when batched or
      // posted): a hot wallet's pending credits, spread over shards; and batches posted and not
      // yet completed, under `COMPLETING#<n>` keys of their own, for the sweep.
      {
        name: 'pending',
        partitionKey: { name: 'pendingFor', type: 'S' },
        sortKey: { name: 'createdAt', type: 'S' },
      },
    ],
    stream: 'NEW_IMAGE',
    timeToLiveAttribute: 'expiresAt',
    description:
      'Double-entry wallet ledger: WALLET#<address> and ACCOUNT#ISSUANCE balances, ENTRY#[account,seq] entries (indexes history and history-shards), TRANSFER#<id> and DEPOSIT#<id> immutable records, IDEMPOTENCY#[sub,key] records (TTL), CREDIT#<id> credits in transit (index pending, stream to the credit poster), BATCH#<id> batches of them (index pending), INBOUND#<address> hot-wallet markers',
  },
  // A table of its own, not items in the wallets table: the wallets table's stream feeds the credit
  // poster and the event deriver, which would read every endpoint change and delivery attempt too;
  // the endpoint routes then hold no grant on the ledger; and attempts expire on a TTL of their own.
  // Layout in shared/webhooks/dynamodb/keys.ts; docs/decisions/webhooks.md says why.
  webhooks: {
    envVar: 'WEBHOOKS_TABLE_NAME',
    partitionKey: { name: 'pk', type: 'S' },
    indexes: [
      // Only delivery attempts carry `deliveriesOf` (their endpoint's id): its log, newest first.
      {
        name: 'deliveries',
        partitionKey: { name: 'deliveriesOf', type: 'S' },
        sortKey: { name: 'attemptKey', type: 'S' },
      },
      // Only events carry `eventsOf` (their wallet's address): a wallet's events by time, for the
      // events API and replays (shared/webhooks/dynamodb/event-keys.ts).
      {
        name: 'events',
        partitionKey: { name: 'eventsOf', type: 'S' },
        sortKey: { name: 'eventKey', type: 'S' },
      },
      // Only delivery tasks not yet done carry `dueShard` (removed when done): what the dispatcher
      // polls, by when each is due, spread over a few shards.
      {
        name: 'due',
        partitionKey: { name: 'dueShard', type: 'S' },
        sortKey: { name: 'dueAt', type: 'N' },
      },
    ],
    timeToLiveAttribute: 'expiresAt',
    description:
      "Webhook endpoints and their delivery log: ENDPOINTS#<address> a wallet's endpoint set (sealed secrets, versioned), ATTEMPT#<endpoint>#<time>#<event>#<n> one delivery attempt (index deliveries, TTL), EVENT#<id> one event of a wallet (index events, TTL), TASK#… a delivery to do (index due while due), IDEMPOTENCY#[address,key] a registration's Idempotency-Key (TTL)",
  },
};

/** The CreateTable request for a definition: what DynamoDB Local is given for each table. */
export function createTableInput(physicalName: string, definition: TableDefinition): CreateTableCommandInput {
  const { name, type } = definition.partitionKey;
  const attributes = new Map<string, AttributeDefinition>([
    [name, { AttributeName: name, AttributeType: type }],
  ]);
  for (const index of definition.indexes ?? []) {
    for (const key of [index.partitionKey, index.sortKey]) {
      attributes.set(key.name, { AttributeName: key.name, AttributeType: key.type });
    }
  }
  return {
    TableName: physicalName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes.values()],
    KeySchema: [{ AttributeName: name, KeyType: 'HASH' }],
    ...(definition.stream
      ? { StreamSpecification: { StreamEnabled: true, StreamViewType: definition.stream } }
      : {}),
    ...(definition.indexes?.length
      ? {
          GlobalSecondaryIndexes: definition.indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: [
              { AttributeName: index.partitionKey.name, KeyType: 'HASH' as const },
              { AttributeName: index.sortKey.name, KeyType: 'RANGE' as const },
            ],
            Projection: { ProjectionType: index.projection ?? ('ALL' as const) },
          })),
        }
      : {}),
  };
}
