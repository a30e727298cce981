import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { petAnswer } from '#shared/pets/pet-http.ts';
import { createPetIds } from '#shared/pets/pet-id.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { type AddPetCommand, makeAddPet } from '#shared/pets/pets.ts';
import { validatePet } from '#shared/schemas/validators.generated.js';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests). */
export interface AddPetAdapters {
  readonly client: DynamoDBDocumentClient;
}

/** The composition root of `POST /api/v3/pet` (Petstore `addPet`): 200 with the stored pet and its ETag. */
export function createAddPetHandler({ client }: AddPetAdapters) {
  const addPet = makeAddPet({
    pets: createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) }),
    ids: createPetIds(),
  });
  return httpHandler<AddPetCommand>({
    operationId: 'addPet',
    body: validatePet,
    run: async ({ body }) => petAnswer(await addPet(body)),
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createAddPetHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
