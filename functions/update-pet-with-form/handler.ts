import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { type FormFields, queryOrForm } from '#shared/http/form-body.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { safeIntegerParameter, textParameter } from '#shared/http/parameters.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { makeUpdatePetWithForm } from '#shared/pets/pet-changes.ts';
import { expectedOf, petAnswer, statusOf } from '#shared/pets/pet-http.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { PRINTABLE_TEXT } from '#shared/schemas/common.ts';
import { petSchema } from '#shared/schemas/pet.ts';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests). */
export interface UpdatePetWithFormAdapters {
  readonly client: DynamoDBDocumentClient;
}

/**
 * The composition root of `POST /api/v3/pet/{petId}` (Petstore `updatePetWithForm`): `name` and/or
 * `status`, from the query (Petstore v3) or a form body (Swagger 2.0's `formData`, HTML forms), set
 * on the stored pet; 200 with it and its ETag.
 */
export function createUpdatePetWithFormHandler({ client }: UpdatePetWithFormAdapters) {
  const updatePetWithForm = makeUpdatePetWithForm({
    pets: createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) }),
  });
  const { minLength: min, maxLength: max } = petSchema.properties.name;
  return httpHandler<FormFields>({
    operationId: 'updatePetWithForm',
    form: ['name', 'status'],
    run: async (request) => {
      const id = safeIntegerParameter('petId', request.pathParameters.petId);
      const name = queryOrForm('name', request.query.name, request.body);
      const status = queryOrForm('status', request.query.status, request.body);
      return petAnswer(
        await updatePetWithForm({
          id,
          ...(name === undefined
            ? {}
            : { name: textParameter('name', name, { min, max, pattern: PRINTABLE_TEXT }) }),
          ...(status === undefined ? {} : { status: statusOf(status) }),
          expected: expectedOf(request),
        }),
      );
    },
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createUpdatePetWithFormHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
