import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { makeFindPetsByTags } from '#shared/pets/find-pets.ts';
import { cursorOf, limitOf, PAGE_ANSWER_BOUND, pageAnswer, tagsOf } from '#shared/pets/pet-http.ts';
import { createPetIndex } from '#shared/pets/pet-search-repository.ts';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests). */
export interface FindPetsByTagsAdapters {
  readonly client: DynamoDBDocumentClient;
}

/**
 * The composition root of `GET /api/v3/pet/findByTags` (Petstore `findPetsByTags`): a `Pet[]` of
 * pets carrying any of the tags, each once, at most `limit` of them, the next page in `Link`.
 */
export function createFindPetsByTagsHandler({ client }: FindPetsByTagsAdapters) {
  const findPetsByTags = makeFindPetsByTags({
    index: createPetIndex({ client, tableName: requireEnv(tables.pets.envVar) }),
    bound: PAGE_ANSWER_BOUND,
  });
  return httpHandler({
    operationId: 'findPetsByTags',
    run: async (request) => {
      const tags = tagsOf(request);
      const limit = limitOf(request);
      const cursor = cursorOf(request);
      const { pets, next } = await findPetsByTags({
        tags,
        limit,
        ...(cursor === undefined ? {} : { cursor }),
      });
      return pageAnswer(pets, next, [
        ...tags.map((tag): [string, string] => ['tags', tag]),
        ['limit', String(limit)],
      ]);
    },
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createFindPetsByTagsHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
