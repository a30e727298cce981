import { randomInt } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { apiEvent, type EventOptions } from './events.ts';

/** A random id in [2^52, 2^52 + 2^47): never one the server assigns in this century, never another test's. */
export const uniquePetId = (): number => 2 ** 52 + randomInt(2 ** 47);

/** What a caller of the pet routes holds: `read:pets` to read, `write:pets` to change. */
const scopesFor = (method: string): readonly string[] => (method === 'GET' ? ['read:pets'] : ['write:pets']);

type PetEventOptions = Omit<EventOptions, 'method' | 'path' | 'resource' | 'pathParameters'>;

/** A request on the pets, `/api/v3/pet` (addPet's POST, updatePet's PUT), by a caller with `write:pets`. */
export const petsEvent = (method: 'POST' | 'PUT', options: PetEventOptions = {}): APIGatewayProxyEvent =>
  apiEvent({ method, path: '/api/v3/pet', scopes: scopesFor(method), ...options });

/** A request on one pet, `/api/v3/pet/{petId}`, by a caller with the scope its method needs. */
export const petEvent = (
  method: string,
  petId: number | string,
  options: PetEventOptions = {},
): APIGatewayProxyEvent =>
  apiEvent({
    method,
    path: `/api/v3/pet/${petId}`,
    resource: '/api/v3/pet/{petId}',
    pathParameters: { petId: String(petId) },
    scopes: scopesFor(method),
    ...options,
  });
