import { isDeepStrictEqual } from 'node:util';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import type { Pet } from './pet.ts';
import type { PetRepository } from './pets.ts';

export interface PetTable {
  readonly client: DynamoDBDocumentClient;
  /** The physical name of the pets table (`tables.pets`: one item per pet, keyed by `id`). */
  readonly tableName: string;
}

/**
 * The pets table: one item per pet, its attributes the pet's members, keyed by `id`. Stores and
 * returns pets as they are; what a pet may hold is the edge's business (the JSON Schema).
 */
export function createPetRepository({ client, tableName }: PetTable): PetRepository {
  return {
    /**
     * A put whose answer was lost (a timeout after DynamoDB applied it) is retried by
     * {@link withRetries}, and the retry then finds the pet in place. The condition's failure
     * returns what is stored, and the very same pet counts as stored: without that check the
     * retry would answer 409 for a pet it created, or store a second copy under a new id.
     */
    async insert(pet: Pet): Promise<boolean> {
      try {
        await withRetries(() =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: pet,
              ConditionExpression: 'attribute_not_exists(id)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return true;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        // The item comes as DynamoDB sends it: the DocumentClient does not translate errors.
        // Deep equality ignores the order of members, which DynamoDB does not keep.
        return error.Item !== undefined && isDeepStrictEqual(unmarshall(error.Item), pet);
      }
    },

    /** A strongly consistent read, so a pet just added is always found. */
    async find(id: number): Promise<Pet | undefined> {
      const { Item } = await withRetries(() =>
        client.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true })),
      );
      return Item as Pet | undefined;
    },
  };
}
