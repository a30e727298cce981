import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { idempotencyKeyOf } from '#shared/http/idempotency-key.ts';
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

/** Marks the answer of an add its Idempotency-Key had already made. */
const REPLAYED = { 'idempotent-replayed': 'true' } as const;

/**
 * The composition root of `POST /api/v3/pet` (Petstore `addPet`): 200 with the stored pet and its
 * ETag; with an Idempotency-Key used before by the caller, the pet that add added, marked replayed.
 */
export function createAddPetHandler({ client }: AddPetAdapters) {
  const addPet = makeAddPet({
    pets: createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) }),
    ids: createPetIds(),
  });
  return httpHandler<AddPetCommand>({
    operationId: 'addPet',
    body: validatePet,
    run: async (request) => {
      const key = idempotencyKeyOf(request.headerValues('idempotency-key'));
      const added = await addPet(
        request.body,
        key === undefined ? undefined : { owner: request.principal.sub, key },
      );
      const answer = petAnswer(added);
      return added.replayed ? { ...answer, headers: { ...answer.headers, ...REPLAYED } } : answer;
    },
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createAddPetHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
