import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { UnprocessedKeysError, withRetries } from '../dynamodb/retry.ts';
import type { IdPage, PetIndex } from './find-pets.ts';
import { STATUS_INDEX, statusShardKey, TAGS_INDEX } from './pet-index.ts';
import { type PetTable, storedPetOf } from './pet-repository.ts';
import type { StoredPet } from './pets.ts';

/**
 * The pets table's indexes (shared/pets/pet-index.ts): each page of ids one Query of one key, in
 * id order, reading only the ids; the pets then by key, strongly consistent, in one BatchGetItem.
 */
export function createPetIndex({ client, tableName }: PetTable): PetIndex {
  async function ids(
    indexName: string,
    key: string,
    sortKey: string,
    value: string,
    after: number | undefined,
    limit: number,
  ): Promise<IdPage> {
    const { Items, LastEvaluatedKey } = await withRetries(() =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: indexName,
          KeyConditionExpression: after === undefined ? '#key = :value' : '#key = :value AND #sort > :after',
          ExpressionAttributeNames: { '#key': key, '#sort': sortKey },
          ExpressionAttributeValues: { ':value': value, ...(after === undefined ? {} : { ':after': after }) },
          // Only the pet's id: a tag entry's own id is a 38-digit number no JavaScript number holds.
          ProjectionExpression: '#sort',
          Limit: limit,
        }),
      ),
    );
    return {
      ids: (Items ?? []).map((item) => item[sortKey] as number),
      more: LastEvaluatedKey !== undefined,
    };
  }

  return {
    statusIds: (status, shard, after, limit) =>
      ids(STATUS_INDEX, 'statusShard', 'id', statusShardKey(status, shard), after, limit),
    tagIds: (tag, after, limit) => ids(TAGS_INDEX, 'tag', 'petId', tag, after, limit),

    /**
     * Keys DynamoDB leaves unprocessed are asked for again after a backoff, within the attempts of
     * {@link withRetries} (then a 503), never at once and without end.
     */
    async read(petIds) {
      const found = new Map<number, StoredPet>();
      let pending = [...new Set(petIds)].map((id) => ({ id }));
      if (pending.length === 0) return found;
      await withRetries(async () => {
        const { Responses, UnprocessedKeys } = await client.send(
          new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of Responses?.[tableName] ?? []) found.set(item.id as number, storedPetOf(item));
        pending = (UnprocessedKeys?.[tableName]?.Keys as { id: number }[] | undefined) ?? [];
        if (pending.length > 0) throw new UnprocessedKeysError(`${pending.length} keys unprocessed`);
      });
      return found;
    },
  };
}
