import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { makeFindPetsByStatus } from '#shared/pets/find-pets.ts';
import { cursorOf, limitOf, PAGE_ANSWER_BOUND, pageAnswer, statusesOf } from '#shared/pets/pet-http.ts';
import { createPetIndex } from '#shared/pets/pet-search-repository.ts';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests). */
export interface FindPetsByStatusAdapters {
  readonly client: DynamoDBDocumentClient;
}

/**
 * The composition root of `GET /api/v3/pet/findByStatus` (Petstore `findPetsByStatus`): a `Pet[]`
 * of pets with any of the statuses, at most `limit` of them, the next page in `Link`.
 */
export function createFindPetsByStatusHandler({ client }: FindPetsByStatusAdapters) {
  const findPetsByStatus = makeFindPetsByStatus({
    index: createPetIndex({ client, tableName: requireEnv(tables.pets.envVar) }),
    bound: PAGE_ANSWER_BOUND,
  });
  return httpHandler({
    operationId: 'findPetsByStatus',
    run: async (request) => {
      const statuses = statusesOf(request);
      const limit = limitOf(request);
      const cursor = cursorOf(request);
      const { pets, next } = await findPetsByStatus({
        statuses,
        limit,
        ...(cursor === undefined ? {} : { cursor }),
      });
      return pageAnswer(pets, next, [
        ...statuses.map((status): [string, string] => ['status', status]),
        ['limit', String(limit)],
      ]);
    },
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createFindPetsByStatusHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
