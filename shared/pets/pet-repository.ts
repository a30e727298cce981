import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '../config.ts';
import { createDocumentClient } from '../dynamodb/client.ts';
import { tables } from '../dynamodb/tables.ts';
import { categorySchema, type Pet, petSchema } from '../schemas/pet.ts';

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
  return Item ? toPet(Item) : undefined;
}

const PET_KEYS = Object.keys(petSchema.properties);
const PART_KEYS = Object.keys(categorySchema.properties);

/** Keeps `keys` of `value`, in that order. */
function pick(value: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked;
}

/** DynamoDB returns attributes in no particular order; answer in the schema's, like the request. */
function toPet(item: Record<string, unknown>): Pet {
  const pet = pick(item, PET_KEYS);
  if (pet.category) pet.category = pick(pet.category as Record<string, unknown>, PART_KEYS);
  if (Array.isArray(pet.tags))
    pet.tags = pet.tags.map((tag: Record<string, unknown>) => pick(tag, PART_KEYS));
  return pet as Pet;
}
