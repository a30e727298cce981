import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { safeIntegerParameter } from '#shared/http/parameters.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { petAnswer } from '#shared/pets/pet-http.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { makeGetPet } from '#shared/pets/pets.ts';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests). */
export interface GetPetAdapters {
  readonly client: DynamoDBDocumentClient;
}

/** The composition root of `GET /api/v3/pet/{petId}` (Petstore `getPetById`): 200 with its ETag, or 404 when absent. */
export function createGetPetHandler({ client }: GetPetAdapters) {
  const getPet = makeGetPet({
    pets: createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) }),
  });
  return httpHandler({
    operationId: 'getPetById',
    run: async ({ pathParameters }) => {
      return petAnswer(await getPet({ id: safeIntegerParameter('petId', pathParameters.petId) }));
    },
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createGetPetHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
