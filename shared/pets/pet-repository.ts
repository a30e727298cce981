import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { requireEnv } from '../config.ts';
import { createDocumentClient } from '../dynamodb/client.ts';
import { withRetries } from '../dynamodb/retry.ts';
import { tables } from '../dynamodb/tables.ts';
import { categorySchema, type Pet, petSchema } from '../schemas/pet.ts';

const client = createDocumentClient();
const tableName = requireEnv(tables.pets.envVar);

/**
 * Stores a new pet; `false` when another pet has that id (nothing is overwritten).
 *
 * A put whose answer was lost (a timeout after DynamoDB applied it) is retried by
 * {@link withRetries}, and the retry then finds the pet in place. The condition's failure returns
 * what is stored, and the very same pet counts as stored: without that check the retry would
 * answer 409 for a pet it created, or store a second copy under a new server-assigned id.
 */
export async function insertPet(pet: Pet): Promise<boolean> {
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
    return error.Item !== undefined && isSamePet(toPet(unmarshall(error.Item)), pet);
  }
}

/** Reads a pet with a strongly consistent read, so a pet just added is always found. */
export async function findPet(id: number): Promise<Pet | undefined> {
  const { Item } = await withRetries(() =>
    client.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true })),
  );
  return Item ? toPet(Item) : undefined;
}

/** Whether two pets are the same, whatever the order of their members. */
const isSamePet = (stored: Pet, pet: Pet): boolean => JSON.stringify(stored) === JSON.stringify(toPet(pet));

const PET_KEYS = Object.keys(petSchema.properties);
const PART_KEYS = Object.keys(categorySchema.properties);

/** Keeps `keys` of `value`, in that order. */
function pick(value: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked;
}

/** DynamoDB returns attributes in no particular order; answer in the schema's, like the request. */
function toPet(item: Readonly<Record<string, unknown>>): Pet {
  const pet = pick(item, PET_KEYS);
  if (pet.category) pet.category = pick(pet.category as Record<string, unknown>, PART_KEYS);
  if (Array.isArray(pet.tags))
    pet.tags = pet.tags.map((tag: Record<string, unknown>) => pick(tag, PART_KEYS));
  return pet as Pet;
}
