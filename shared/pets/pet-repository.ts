import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '../config.ts';
import { createDocumentClient } from '../dynamodb/client.ts';
import { tables } from '../dynamodb/tables.ts';
import type { Pet } from '../schemas/pet.ts';

const client = createDocumentClient();
const tableName = requireEnv(tables.pets.envVar);

/** Stores a new pet; `false` when a pet with that id exists already (nothing is overwritten). */
export async function insertPet(pet: Pet): Promise<boolean> {
  try {
    await client.send(
      new PutCommand({ TableName: tableName, Item: pet, ConditionExpression: 'attribute_not_exists(id)' }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** Reads a pet with a strongly consistent read, so a pet just added is always found. */
export async function findPet(id: number): Promise<Pet | undefined> {
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true }),
  );
  return Item as Pet | undefined;
}
