import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { safeIntegerParameter } from '#shared/http/parameters.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { makeDeletePet } from '#shared/pets/pet-changes.ts';
import { expectedOf, petAnswer } from '#shared/pets/pet-http.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests). */
export interface DeletePetAdapters {
  readonly client: DynamoDBDocumentClient;
}

/**
 * The composition root of `DELETE /api/v3/pet/{petId}` (Petstore `deletePet`): 200 with the pet
 * as it was and its last ETag, 404 when there is none. The Petstore's `api_key` header is read by
 * nothing: the bearer token with `write:pets` is what authorizes (docs/decisions/pet-resource.md).
 */
export function createDeletePetHandler({ client }: DeletePetAdapters) {
  const deletePet = makeDeletePet({
    pets: createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) }),
  });
  return httpHandler({
    operationId: 'deletePet',
    run: async (request) =>
      petAnswer(
        await deletePet({
          id: safeIntegerParameter('petId', request.pathParameters.petId),
          expected: expectedOf(request),
        }),
      ),
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createDeletePetHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
