import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { TableName } from '../routes.ts';

/** A table's key schema and settings: read by CDK and by the DynamoDB Local set-up alike. */
export interface TableDefinition {
  /** Environment variable through which a function learns the table's physical name. */
  readonly envVar: string;
  readonly partitionKey: { readonly name: string; readonly type: 'S' | 'N' };
  /** Attribute holding an epoch-seconds expiry that DynamoDB TTL deletes after. */
  readonly timeToLiveAttribute?: string;
  readonly description: string;
}

export const tables: Readonly<Record<TableName, TableDefinition>> = {
  pets: {
    envVar: 'PETS_TABLE_NAME',
    partitionKey: { name: 'id', type: 'N' },
    description: 'One item per pet, keyed by its int64 id',
  },
  wallets: {
    envVar: 'WALLETS_TABLE_NAME',
    partitionKey: { name: 'pk', type: 'S' },
    timeToLiveAttribute: 'expiresAt',
    description:
      'Single-table wallet ledger: WALLET#<address> balances, TRANSFER#<id> and DEPOSIT#<id> immutable records, IDEMPOTENCY#[sub,key] records (TTL)',
  },
};

/** The CreateTable request for a definition: what DynamoDB Local is given for each table. */
export function createTableInput(physicalName: string, definition: TableDefinition): CreateTableCommandInput {
  const { name, type } = definition.partitionKey;
  return {
    TableName: physicalName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: name, AttributeType: type }],
    KeySchema: [{ AttributeName: name, KeyType: 'HASH' }],
  };
}
