import { categorySchema, type Pet, petSchema } from '../schemas/pet.ts';

const PET_KEYS = Object.keys(petSchema.properties);
const PART_KEYS = Object.keys(categorySchema.properties);

/** Keeps `keys` of `value`, in that order. */
function pick(value: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked;
}

/**
 * A pet as the API answers it: the schema's members in the schema's order, like the request.
 * DynamoDB returns attributes in no particular order, so the stored pet is put back in shape here,
 * at the edge, and the repository stays a table adapter that knows no schema.
 */
export function petRepresentation(pet: Readonly<Record<string, unknown>>): Pet {
  const shaped = pick(pet, PET_KEYS);
  if (shaped.category) shaped.category = pick(shaped.category as Record<string, unknown>, PART_KEYS);
  if (Array.isArray(shaped.tags))
    shaped.tags = shaped.tags.map((tag: Record<string, unknown>) => pick(tag, PART_KEYS));
  return shaped as Pet;
}
