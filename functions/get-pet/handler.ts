import { httpHandler } from '#shared/http/handler.ts';
import { getPet } from '#shared/pets/pets.ts';

/** `GET /api/v3/pet/{petId}` (Petstore `getPetById`): 200 with the pet, 404 when absent. */
export const handler = httpHandler({
  operationId: 'getPetById',
  run: async ({ pathParameters }) => ({ statusCode: 200, body: await getPet(pathParameters.petId) }),
});
