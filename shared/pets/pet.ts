/**
 * The pet of the catalog, as the use cases and the repository handle it. The shapes come from
 * the JSON Schema (`shared/schemas/pet.ts`) as types only: nothing here validates or reshapes.
 */
export type { Pet, PetInput } from '../schemas/pet.ts';
