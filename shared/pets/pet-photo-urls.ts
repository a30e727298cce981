import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import type { PetPhotoUrls } from './pet-images.ts';
import type { PetTable } from './pet-repository.ts';

/**
 * The photo URLs of a pet in the pets table, for the image read-back: a module of its own, so that
 * the reading function bundles one GetItem, not the repository's transactions.
 */
export function createPetPhotoUrls({ client, tableName }: PetTable): PetPhotoUrls {
  return {
    async photoUrlsOf(id: number): Promise<readonly string[] | undefined> {
      // Strongly consistent: a pet deleted, or a URL removed, a moment ago must already withdraw
      // the image. Only `photoUrls` comes back: the image's answer needs nothing else of the pet.
      const { Item } = await withRetries(() =>
        client.send(
          new GetCommand({
            TableName: tableName,
            Key: { id },
            ConsistentRead: true,
            ProjectionExpression: '#photoUrls',
            ExpressionAttributeNames: { '#photoUrls': 'photoUrls' },
          }),
        ),
      );
      if (Item === undefined) return undefined;
      const urls: unknown = Item.photoUrls;
      return Array.isArray(urls) ? urls.filter((url): url is string => typeof url === 'string') : [];
    },
  };
}
