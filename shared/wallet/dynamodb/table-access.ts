import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { WalletSettings } from '../model/settings.ts';

/** Where the wallet ledger lives: one DocumentClient per container, and the table's physical name. */
export interface WalletTableAccess {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** What the composition root of a wallet route is given: its table and its settings. */
export interface WalletFunctionDependencies extends WalletTableAccess {
  readonly settings: WalletSettings;
}
