import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { ValidationError } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import type { PetInput } from '#shared/pets/pet.ts';
import { makeUpdatePet } from '#shared/pets/pet-changes.ts';
import { expectedOf, petAnswer } from '#shared/pets/pet-http.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { validatePet } from '#shared/schemas/validators.generated.js';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests). */
export interface UpdatePetAdapters {
  readonly client: DynamoDBDocumentClient;
}

/**
 * The composition root of `PUT /api/v3/pet` (Petstore `updatePet`): replaces the stored pet with
 * the body's id; 200 with it and its new ETag, 404 when there is none, 412 when `If-Match` names
 * another revision.
 */
export function createUpdatePetHandler({ client }: UpdatePetAdapters) {
  const updatePet = makeUpdatePet({
    pets: createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) }),
  });
  return httpHandler<PetInput>({
    operationId: 'updatePet',
    body: validatePet,
    run: async (request) => {
      const { id } = request.body;
      if (id === undefined)
        throw new ValidationError([{ pointer: '/id', detail: 'is required to update a pet' }]);
      return petAnswer(await updatePet({ pet: { ...request.body, id }, expected: expectedOf(request) }));
    },
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createUpdatePetHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
