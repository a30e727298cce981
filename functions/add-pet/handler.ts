import { httpHandler } from '#shared/http/handler.ts';
import { addPet } from '#shared/pets/pets.ts';
import type { PetInput } from '#shared/schemas/pet.ts';
import { validatePet } from '#shared/schemas/validators.generated.js';

/** `POST /api/v3/pet` (Petstore `addPet`): 200 with the stored pet. */
export const handler = httpHandler<PetInput>({
  operationId: 'addPet',
  body: validatePet,
  run: async ({ body }) => ({ statusCode: 200, body: await addPet(body) }),
});
